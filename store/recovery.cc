// Opening a store (catalog.h): its meta state checked and loaded, its columns opened, and their
// deltas rebuilt from the documents stored since each column's last merge (the docs table is
// their log: FORMAT.md).
#include <algorithm>
#include <charconv>
#include <unordered_map>

#include "common/coding.h"
#include "store/catalog.h"
#include "store/docs_table.h"
#include "store/read_path.h"

namespace neardup {
namespace {

// "the whole", or "shard 1 of 3".
std::string share_name(std::uint32_t shard, std::uint32_t shards) {
  if (shards == 1) return "the whole";
  return "shard " + std::to_string(shard) + " of " + std::to_string(shards);
}

using Code = StoreError::Code;
using records::DocRecord;

// The store's format version, when this build reads it.
StoreResult<std::uint32_t> check_format(const lmdb::Txn& txn, lmdb::Dbi meta) {
  auto format = meta.get(txn, "format");
  if (!format) return store_error(Code::kCorrupt, "not a neardup index (no format in meta)");
  const std::uint32_t version = records::decode_u32(*format).value_or(0);
  if (version < records::kOldestReadableFormat || version > records::kFormatVersion) {
    return store_error(Code::kFormat, "format version " + std::to_string(version) +
                                          " on disk, this build reads versions " +
                                          std::to_string(records::kOldestReadableFormat) + " to " +
                                          std::to_string(records::kFormatVersion) +
                                          " (no conversion: rebuild the index with this build)");
  }
  return version;
}

// A writable open marks an older readable store as this build's version (records.h: what it
// has is read alike), so that an older build never misreads what this one adds.
StoreResult<> upgrade_format(const lmdb::Txn& txn, lmdb::Dbi meta) {
  auto format = lift(meta.get(txn, "format"));
  if (!format) return std::unexpected(format.error());
  if (records::decode_u32(*format).value_or(0) == records::kFormatVersion) return {};
  return lift(meta.put(txn, "format", records::encode_u32(records::kFormatVersion)));
}

// A meta number from which documents are kept in a newer form into tables.*from: `key`
// "docs_compact_from" (records.h, DocRecord) or "docs_block_from" (docs_table.h). A writable open
// of a store without it writes it once: 1 for a store created now (on_disk 0), the next document
// number for a store older than version `since` (its documents so far keep the form they have).
// Read-only, such a store has none in the newer form: `none`.
StoreResult<> load_doc_start(const lmdb::Txn& txn, StoreTables& tables, std::string_view key,
                             std::uint32_t since, std::uint64_t none,
                             std::uint64_t StoreTables::*from, std::uint32_t on_disk,
                             bool writable) {
  const std::string name(key);
  auto stored = tables.meta.get(txn, key);
  if (stored) {
    auto number = records::decode_u64(*stored);
    if (!number || *number == 0) return corrupt("meta " + name);
    tables.*from = *number;
    return {};
  }
  if (stored.error().code != MDB_NOTFOUND) return std::unexpected(from_lmdb(stored.error()));
  if (on_disk >= since) {
    return corrupt("meta " + name + " (missing in a store of version " + std::to_string(since) +
                   " or later)");
  }
  tables.*from = none;
  if (!writable) return {};
  auto last = DocsTable(tables).last(txn);
  if (!last) return std::unexpected(last.error());
  if (auto put = lift(tables.meta.put(txn, key, records::encode_u64(*last + 1))); !put) return put;
  tables.*from = *last + 1;
  return {};
}

// Where each document's record is and in which form (FORMAT.md, "docs").
StoreResult<> load_doc_form(const lmdb::Txn& txn, StoreTables& tables, std::uint32_t on_disk,
                            bool writable) {
  tables.docs_block_from = records::kNoDocBlocks;  // until read: records of their own
  if (auto compact = load_doc_start(txn, tables, "docs_compact_from", 8, records::kNoCompactDocs,
                                    &StoreTables::docs_compact_from, on_disk, writable);
      !compact) {
    return compact;
  }
  if (auto blocks = load_doc_start(txn, tables, "docs_block_from", 10, records::kNoDocBlocks,
                                   &StoreTables::docs_block_from, on_disk, writable);
      !blocks) {
    return blocks;
  }
  if (tables.docs_block_from != records::kNoDocBlocks && !tables.has_docs_tail) {
    return corrupt("docs_tail (missing in a store with blocks)");
  }
  return {};
}

// What the store's table and `ids` entries keep of their keys (meta key_bits): a store created
// now (on_disk 0) gets `created`, written down; one older than version 11 keeps whole keys,
// written down by a writable open; a store of 11 or later without it is damaged.
StoreResult<records::KeyBits> load_key_bits(const lmdb::Txn& txn, lmdb::Dbi meta,
                                            std::uint32_t on_disk, bool writable,
                                            records::KeyBits created) {
  auto stored = meta.get(txn, "key_bits");
  if (stored) {
    auto bits = records::KeyBits::decode(*stored);
    if (!bits) return corrupt("meta key_bits");
    return *bits;
  }
  if (stored.error().code != MDB_NOTFOUND) return std::unexpected(from_lmdb(stored.error()));
  if (on_disk >= 11) return corrupt("meta key_bits (missing in a store of version 11 or later)");
  const records::KeyBits bits = on_disk == 0 ? created : records::KeyBits{};
  if (writable) {
    if (auto put = lift(meta.put(txn, "key_bits", bits.encode())); !put) {
      return std::unexpected(put.error());
    }
  }
  return bits;
}

}  // namespace

void Catalog::set_key_bits(const records::KeyBits& bits) {
  table_format = RunFormat::keeping(bits.tables);
  id_format = RunFormat::keeping(bits.ids);
}

StoreResult<> Catalog::create_or_load(StoreEnv& env) {
  auto wanted = TableDesign::for_store(config.design_k, config.expected_documents, config.tables);
  if (!wanted) return store_error(Code::kInvalidArgument, wanted.error());
  design = *wanted;
  StoreTables& tables = env.tables();
  auto loaded = env.write(
      [&](const lmdb::Txn& txn) -> StoreResult<> {
        mutex.assert_held();  // write() runs the body on this thread
        auto meta = lift(lmdb::Dbi::open(txn, "meta", MDB_CREATE));
        if (!meta) return std::unexpected(meta.error());
        tables.meta = *meta;
        const records::DesignState want{design.k, design.r,
                                        static_cast<std::uint32_t>(design.tables()), config.shard,
                                        config.shards};
        std::uint32_t on_disk = 0;  // a store created now
        if (auto format = tables.meta.get(txn, "format"); !format) {
          if (format.error().code != MDB_NOTFOUND)
            return std::unexpected(from_lmdb(format.error()));
          auto p =
              lift(tables.meta.put(txn, "format", records::encode_u32(records::kFormatVersion)));
          if (!p) return p;
          if (auto d = lift(tables.meta.put(txn, "design", want.encode())); !d) return d;
        } else if (auto checked = check_format(txn, tables.meta); !checked) {
          return std::unexpected(checked.error());
        } else if (auto upgraded = upgrade_format(txn, tables.meta); !upgraded) {
          return upgraded;
        } else {
          on_disk = *checked;
        }
        if (auto opened = env.open_tables(txn, MDB_CREATE); !opened) return opened;
        if (auto form = load_doc_form(txn, tables, on_disk, true); !form) return form;
        // A new store's table entries keep their widest prefix and TableDesign::kCheckedBits
        // more; its ids entries keep the top 40 bits.
        const records::KeyBits created{.tables = design.kept_key_bits(), .ids = kMinKeptBits};
        auto key_bits = load_key_bits(txn, tables.meta, on_disk, true, created);
        if (!key_bits) return std::unexpected(key_bits.error());
        set_key_bits(*key_bits);
        auto stored = records::DesignState::decode(tables.meta.get(txn, "design").value_or(""));
        if (!stored) return corrupt("meta design");
        if (config.tables == 0 && stored->k == want.k && stored->r != want.r) {
          // store.tables 0 derives a new store's design; a store keeps the one it was made with
          // (a store made when the rule chose more tables for the same expected_documents).
          design = TableDesign::make(stored->k, stored->r);
        } else if (stored->k != want.k || stored->r != want.r) {
          return store_error(
              Code::kDesign,
              "stored design is k=" + std::to_string(stored->k) +
                  " r=" + std::to_string(stored->r) + " (" + std::to_string(stored->tables) +
                  " tables) but the config asks for k=" + std::to_string(want.k) +
                  " r=" + std::to_string(want.r) + " (" + std::to_string(want.tables) +
                  " tables; store.design_k, store.tables, store.expected_documents): rebuild "
                  "the index or set store.design_k and store.tables to the stored design");
        }
        if (stored->shard != want.shard || stored->shards != want.shards) {
          return store_error(Code::kDesign,
                             "the store holds " + share_name(stored->shard, stored->shards) +
                                 " of the index, but the config asks for " +
                                 share_name(want.shard, want.shards) +
                                 " (store.shard, store.shards): open each shard's store with "
                                 "its own shard number");
        }
        shard = want.shard;
        shards = want.shards;
        return load_state(txn, tables, false);
      },
      [&] {
        mutex.assert_held();  // write() runs it on this thread
        scheme_numbers.clear();
        schemes.clear();
        ids.reset();
        members.reset();
      });
  if (!loaded) return loaded;
  if (auto built = rebuild_id_filter(env); !built) return built;
  auto txn = lift(env.begin_read_unlocked());
  if (!txn) return std::unexpected(txn.error());
  if (auto rebuilt = rebuild_deltas(*txn, tables); !rebuilt) return rebuilt;
  if (options.presize_busy_deltas) {
    // The wide columns gain an entry a page each and fill together: a scheme's tables with each
    // other, `ids` and `members` with every scheme's. Each is busy if one it fills with is.
    const auto columns = columns_and_schemes();
    auto busy_beside = [&](const Scheme* filled_by) {
      return std::ranges::any_of(columns, [&](const auto& c) {
        return c.first->format() != RunFormat::kNarrow &&
               (filled_by == nullptr || c.second == filled_by) && c.first->busy();
      });
    };
    for (auto [column, scheme] : columns) {
      if (column->format() == RunFormat::kNarrow) {
        column->presize_if_busy();
      } else {
        column->presize_if_busy(busy_beside(scheme));
      }
    }
  }
  if (options.read_runs_ahead) {
    // Last, so that what the open read before (the band runs, for their filters) does not push
    // them out of a page cache too small for both; the band runs' high parts after the tables.
    for (Scheme& scheme : schemes) {
      for (auto& table : scheme.tables) {
        if (auto r = lift(table->read_runs_ahead(*txn, env.map_generation())); !r) return r;
      }
    }
    for (Scheme& scheme : schemes) {
      if (!scheme.bands) continue;
      if (auto r = lift(scheme.bands->read_high_parts_ahead(*txn, env.map_generation())); !r) {
        return r;
      }
    }
  }
  return {};
}

StoreResult<> Catalog::load_read_only(StoreEnv& env, lmdb::Txn& snapshot) {
  StoreTables& tables = env.tables();
  {
    auto txn = lift(env.begin_read_unlocked());
    if (!txn) return std::unexpected(txn.error());
    // A format-2 store has no sketches database: read meta alone first, to name its version.
    auto meta = lmdb::Dbi::open(*txn, "meta", 0);
    if (!meta) {
      return store_error(Code::kCorrupt, "not a neardup index (" + meta.error().message + ")");
    }
    tables.meta = *meta;
    auto format = check_format(*txn, tables.meta);
    if (!format) return std::unexpected(format.error());
    if (auto opened = env.open_tables(*txn, 0); !opened) {
      return store_error(Code::kCorrupt, "not a neardup index (" + opened.error().message + ")");
    }
    if (auto form = load_doc_form(*txn, tables, *format, false); !form) return form;
    auto key_bits = load_key_bits(*txn, tables.meta, *format, false, {});
    if (!key_bits) return std::unexpected(key_bits.error());
    set_key_bits(*key_bits);
    auto stored = records::DesignState::decode(tables.meta.get(*txn, "design").value_or(""));
    if (!stored) return corrupt("meta design");
    design = TableDesign::make(stored->k, stored->r);
    shard = stored->shard;
    shards = stored->shards;
    // Makes the handles opened in it usable by later transactions.
    if (auto committed = lift(txn->commit()); !committed) return committed;
  }
  auto begun = lift(env.begin_read_unlocked());
  if (!begun) return std::unexpected(begun.error());
  snapshot = std::move(*begun);
  if (auto loaded = load_state(snapshot, tables, true); !loaded) return loaded;
  return rebuild_deltas(snapshot, tables);
}

StoreResult<> Catalog::load_state(const lmdb::Txn& txn, const StoreTables& tables, bool read_only) {
  auto last = DocsTable(tables).last(txn);
  if (!last) return std::unexpected(last.error());
  next_doc = *last + 1;
  if (auto stored = tables.meta.get(txn, "documents")) {
    auto count = records::decode_u64(*stored);
    if (!count) return corrupt("meta documents");
    documents = *count;
  }
  // Live schemes ("scheme/<id>") and dropped ones ("dropped/<number>" -> id), numbered 0..n-1.
  std::vector<std::pair<std::string, records::SchemeState>> found;
  std::vector<bool> dropped;
  bool bad = false;
  auto listed = lift(
      for_each_prefixed(txn, tables.meta, "scheme/", [&](std::string_view k, std::string_view v) {
        auto state = records::SchemeState::decode(v);
        if (!state) bad = true;
        if (state) found.emplace_back(std::string(k.substr(7)), *state);
      }));
  if (!listed) return listed;
  listed = lift(
      for_each_prefixed(txn, tables.meta, "dropped/", [&](std::string_view k, std::string_view v) {
        std::uint32_t number = 0;
        auto digits = k.substr(8);
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
        if (ec != std::errc() || end != digits.data() + digits.size()) bad = true;
        found.emplace_back(std::string(v), records::SchemeState{.number = number});
        if (dropped.size() <= number) dropped.resize(number + 1);
        dropped[number] = true;
      }));
  if (!listed) return listed;
  if (bad) return corrupt("a meta scheme record");
  std::sort(found.begin(), found.end(),
            [](const auto& a, const auto& b) { return a.second.number < b.second.number; });
  for (const auto& [name, state] : found) {
    if (state.number != schemes.size()) return corrupt("meta scheme numbering");
    if (state.number < dropped.size() && dropped[state.number]) {
      schemes.push_back(Scheme{.id = name, .state = state, .dropped = true});
      continue;
    }
    if (auto added = open_scheme(txn, tables, name, state, false, read_only); !added) {
      return added;
    }
  }
  ids = std::make_unique<Column>("ids", 64, id_format, bucket_bits, options.delta_entries);
  if (auto r = lift(ids->load(txn, tables.meta, !read_only, next_doc - 1, read_only)); !r) {
    return r;
  }
  members =
      std::make_unique<Column>("members", 64, RunFormat::kWide, bucket_bits, options.delta_entries);
  if (auto r = lift(members->load(txn, tables.meta, !read_only, next_doc - 1, read_only)); !r) {
    return r;
  }
  std::set<std::uint64_t> forgotten_docs;
  auto listed_forgotten =
      lift(for_each_prefixed(txn, tables.forgotten, "", [&](std::string_view k, std::string_view) {
        if (k.size() == 8) forgotten_docs.insert(coding::decode_be64(k.data()));
      }));
  if (!listed_forgotten) return listed_forgotten;
  forgotten = std::move(forgotten_docs);
  return load_stored_samples(txn, tables);
}

StoreResult<> Catalog::load_stored_samples(const lmdb::Txn& txn, const StoreTables& tables) {
  stored_samples.clear();
  const DocsTable docs(tables);
  for (std::uint64_t doc = kStoredSampleEvery; doc < next_doc; doc += kStoredSampleEvery) {
    auto record = docs.find(txn, doc);
    if (!record) return std::unexpected(record.error());
    if (*record) stored_samples.emplace_back(doc, (*record)->stored_at_s);
  }
  return {};
}

StoreResult<> Catalog::add_scheme(const lmdb::Txn& txn, const StoreTables& tables,
                                  const std::string& name, const PageRequest& page) {
  records::SchemeState state{.number = static_cast<std::uint32_t>(schemes.size())};
  if (!page.sketch.empty()) {
    const LshDesign lsh = lsh_design(page);
    state.hashes = static_cast<std::uint32_t>(page.sketch.size());
    state.bands = lsh.bands;
    state.rows = lsh.rows;
    state.wide_bands = !page.sketch_upper.empty();
  }
  if (auto p = lift(tables.meta.put(txn, "scheme/" + name, state.encode())); !p) return p;
  if (auto opened = open_scheme(txn, tables, name, state, true); !opened) return opened;
  for (Column* column : columns_of(schemes.back())) column->delta().mark();
  return {};
}

StoreResult<> Catalog::open_scheme(const lmdb::Txn& txn, const StoreTables& tables,
                                   const std::string& name, const records::SchemeState& state,
                                   bool create, bool read_only) {
  scheme_numbers[name] = state.number;
  Scheme& scheme = schemes.emplace_back();
  scheme.id = name;
  scheme.state = state;
  const std::string number = std::to_string(state.number);
  for (std::size_t t = 0; t < design.tables(); ++t) {
    scheme.tables.push_back(std::make_unique<Column>("t/" + number + "/" + std::to_string(t),
                                                     design.prefix_bits(t), table_format,
                                                     bucket_bits, options.delta_entries));
    scheme.tables.back()->filter_prefixes(config.table_filter_bits,
                                          options.prefix_filter_min_entries);
  }
  if (state.has_minhash()) {
    scheme.bands = std::make_unique<Column>("b/" + number, 64, RunFormat::kNarrow, bucket_bits,
                                            2 * options.delta_entries);
  }
  auto passages = std::make_unique<Column>(passages_column(state.number), 64, RunFormat::kNarrow,
                                           bucket_bits, 2 * options.delta_entries);
  if (auto stored = tables.meta.get(txn, "column/" + passages->name())) {
    scheme.passages = std::move(passages);
  } else if (stored.error().code != MDB_NOTFOUND) {
    return std::unexpected(from_lmdb(stored.error()));
  }
  for (Column* column : columns_of(scheme)) {
    if (auto r = lift(column->load(txn, tables.meta, create, next_doc - 1, read_only)); !r) {
      return r;
    }
  }
  return {};
}

StoreResult<> Catalog::add_passages(const lmdb::Txn& txn, const StoreTables& tables,
                                    Scheme& scheme) {
  auto column = std::make_unique<Column>(passages_column(scheme.state.number), 64,
                                         RunFormat::kNarrow, bucket_bits,
                                         2 * options.delta_entries);
  if (auto r = lift(column->load(txn, tables.meta, true, next_doc - 1)); !r) return r;
  column->delta().mark();
  scheme.passages = std::move(column);
  return {};
}

StoreResult<> Catalog::rebuild_id_filter(StoreEnv& env) {
  constexpr std::uint64_t kMinIdFilter = 1ull << 22;  // 4 MiB
  std::uint64_t entries = 0;
  for (const auto& run : ids->state().runs) entries += run.entries;
  if (entries == 0) {
    id_filter = IdFilter();
    return {};
  }
  IdFilter filter(std::max<std::uint64_t>(kMinIdFilter, 2 * entries));
  auto txn = lift(env.begin_read_unlocked());
  if (!txn) return std::unexpected(txn.error());
  for (const auto& run : ids->state().runs) {
    const std::string name = "ids/" + std::to_string(run.id);
    auto dbi = lift(lmdb::Dbi::open(*txn, name, 0));
    if (!dbi) return std::unexpected(dbi.error());
    auto reader = lift(RunReader::open(*txn, *dbi, ids->format(), name));
    if (!reader) return std::unexpected(reader.error());
    while (!reader->done()) {
      filter.add(reader->current().key);
      if (auto next = lift(reader->next()); !next) return next;
    }
  }
  id_filter = std::move(filter);
  return {};
}

// Calls fn(doc, record) for every document past the lowest watermark, in order.
template <typename Fn>
StoreResult<> Catalog::for_each_unmerged_doc(const lmdb::Txn& txn, const StoreTables& tables,
                                             Fn&& fn) {
  std::uint64_t from = ids->watermark();
  for (Column* column : all_columns()) from = std::min(from, column->watermark());
  return DocsTable(tables).for_each(
      txn, from + 1, [&](std::uint64_t doc, const DocRecord& record) -> StoreResult<> {
        mutex.assert_held();  // called on this thread
        if (record.scheme >= schemes.size()) return corrupt("docs record " + std::to_string(doc));
        return fn(doc, record);
      });
}

// Without presizing, a first pass counts each column's entries (a band entry per band, without
// reading the sketches), so that each table is made once at the size it ends at, rather than
// overflowing the small tables until one rehash at the end (a one-page `neardup dedup` on a
// 1.2M-page store: 2.42 s and 1.71 GB against 2.49 s and 1.82 GB, medians). With presizing,
// the busy columns' full-size tables take the entries after the rebuild, in the bucket order of
// the small tables they went to; counting and reserving there made that open slower (1.9 s
// against 1.6-1.7 s), so it is left as it was.
StoreResult<> Catalog::rebuild_deltas(const lmdb::Txn& txn, const StoreTables& tables) {
  if (!options.presize_busy_deltas) {
    if (auto reserved = reserve_deltas(txn, tables); !reserved) return reserved;
  }
  std::vector<std::uint64_t> keys;
  SketchUpper upper;
  auto added = for_each_unmerged_doc(txn, tables, [&](std::uint64_t doc, const DocRecord& record) {
    mutex.assert_held();  // called on this thread
    keys.clear();
    const Scheme& scheme = schemes[record.scheme];
    if (scheme.bands && doc > scheme.bands->watermark() && is_indexed(record)) {
      auto sketch = read_whole_sketch(txn, tables, doc, record, scheme.state.hashes, &upper);
      if (!sketch) return StoreResult<>(std::unexpected(sketch.error()));
      if (scheme.state.wide_bands &&
          upper.size() != std::size_t{scheme.state.bands} * scheme.state.rows) {
        return StoreResult<>(corrupt("the upper values of document " + std::to_string(doc) +
                                     "'s sketch (scheme " + scheme.id + " has wide band keys)"));
      }
      if (!sketch->empty()) {
        this->band_keys(*sketch, upper, scheme.state.bands, scheme.state.rows, keys);
      }
    }
    add_entries(doc, record, keys);
    if (scheme.passages && doc > scheme.passages->watermark()) {
      // The keys it was the first to hold, as logged when it was stored.
      auto logged = tables.passage_log.get(txn, records::sketch_high_key(record.scheme, doc));
      if (logged) {
        auto held = records::decode_keys(*logged);
        if (!held) return StoreResult<>(corrupt("passage_log of document " + std::to_string(doc)));
        for (std::uint64_t key : *held) scheme.passages->add({key, doc});
      } else if (logged.error().code != MDB_NOTFOUND) {
        return StoreResult<>(std::unexpected(from_lmdb(logged.error())));
      }
    }
    return StoreResult<>{};
  });
  if (!added) return added;
  for (Column* column : all_columns()) column->delta().mark();
  return {};
}

StoreResult<> Catalog::reserve_deltas(const lmdb::Txn& txn, const StoreTables& tables) {
  std::unordered_map<const Column*, std::uint64_t> entries;
  const Column* counting = nullptr;
  std::uint64_t* count = nullptr;
  std::vector<std::uint64_t> no_keys;  // as many as a page has band keys
  auto counted =
      for_each_unmerged_doc(txn, tables, [&](std::uint64_t doc, const DocRecord& record) {
        mutex.assert_held();  // called on this thread
        const Scheme& scheme = schemes[record.scheme];
        no_keys.assign(scheme.bands ? scheme.state.bands : 0, 0);
        for_each_entry(doc, record, no_keys, [&](const Column& column, const Entry&) {
          if (&column != counting) count = &entries[counting = &column];
          ++*count;
        });
        return StoreResult<>{};
      });
  if (!counted) return counted;
  for (Column* column : all_columns()) column->delta().reserve(entries[column]);
  return {};
}

}  // namespace neardup
