#include "store/admin.h"

#include <algorithm>

#include "common/coding.h"
#include "store/batch_merges.h"
#include "store/docs_table.h"
#include "store/pending.h"
#include "store/read_path.h"

namespace neardup::admin {
namespace {

using Code = StoreError::Code;
using records::DocRecord;

}  // namespace

IndexStats stats(StoreEnv& env, const Catalog& catalog) {
  const TableDesign& design = catalog.design;
  IndexStats s{.design_k = design.k,
               .design_r = design.r,
               .blocks = static_cast<std::uint32_t>(design.block_width.size()),
               .tables = static_cast<std::uint32_t>(design.tables()),
               .block_widths = design.block_width,
               .format_version = records::kFormatVersion,
               .table_key_bits = catalog.table_format.kept_bits(),
               .id_key_bits = catalog.id_format.kept_bits(),
               .shard = catalog.shard,
               .shards = catalog.shards};
  s.bytes_on_disk = env.bytes_on_disk();
  s.map_size = env.map_size();
  auto read = env.begin_read();
  if (!read) return s;
  const lmdb::Txn& txn = (*read)->txn;
  const StoreTables& tables = env.tables();
  if (auto format = tables.meta.get(txn, "format")) {  // as on disk: a read-only open keeps it
    s.format_version = records::decode_u32(*format).value_or(s.format_version);
  }
  if (auto docs = tables.meta.get(txn, "documents")) {
    s.documents = records::decode_u64(*docs).value_or(0);
  }
  if (auto last = DocsTable(tables).last(txn)) s.last_doc = *last;
  std::vector<std::pair<std::uint32_t, IndexStats::Scheme>> schemes;
  (void)for_each_prefixed(
      txn, tables.meta, "scheme/", [&](std::string_view key, std::string_view value) {
        auto state = records::SchemeState::decode(value);
        if (!state) return;
        schemes.push_back({state->number,
                           {std::string(key.substr(7)), state->hashes, state->bands, state->rows,
                            state->wide_bands}});
      });
  std::sort(schemes.begin(), schemes.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  const std::vector<std::uint64_t> memory = catalog.scheme_memory();
  for (auto& [number, scheme] : schemes) {
    if (number < memory.size()) scheme.memory_bytes = memory[number];
    s.schemes.push_back(std::move(scheme));
  }
  const Catalog::MemoryTotals totals = catalog.memory_totals();
  s.delta_memory_bytes = totals.deltas;
  s.index_memory_bytes = totals.index;
  s.merge_filter_memory_bytes = totals.merging;
  (void)for_each_prefixed(
      txn, tables.meta, "column/", [&](std::string_view key, std::string_view value) {
        auto state = records::ColumnState::decode(value);
        if (!state) return;
        IndexStats::Column column{std::string(key.substr(7)), state->watermark, state->runs.size()};
        for (const auto& run : state->runs) column.entries += run.entries;
        s.runs += column.runs;
        s.columns.push_back(std::move(column));
      });
  (void)for_each_prefixed(
      txn, tables.offsets, "", [&](std::string_view key, std::string_view value) {
        s.applied_offsets.emplace_back(
            key, static_cast<std::int64_t>(records::decode_u64(value).value_or(0)));
      });
  (void)for_each_prefixed(txn, tables.pending, "", [&](std::string_view, std::string_view record) {
    records::for_each_pending_entry(record,
                                    [&](std::int64_t, std::string_view) { ++s.pending_verdicts; });
  });
  return s;
}

StoreResult<std::vector<std::pair<std::string, std::string>>> learned(StoreEnv& env,
                                                                      std::string_view prefix) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!env.tables().has_learned) return out;
  auto read = env.begin_read();
  if (!read) return std::unexpected(read.error());
  auto walked = for_each_prefixed(
      (*read)->txn, env.tables().learned, prefix,
      [&](std::string_view key, std::string_view value) { out.emplace_back(key, value); });
  if (!walked) return std::unexpected(from_lmdb(walked.error()));
  return out;
}

StoreResult<std::optional<std::int64_t>> applied_offset(StoreEnv& env,
                                                        const std::string& partition) {
  auto read = env.begin_read();
  if (!read) return std::unexpected(read.error());
  auto value = env.tables().offsets.get((*read)->txn, partition);
  if (!value) {
    if (value.error().code == MDB_NOTFOUND) return std::nullopt;
    return std::unexpected(from_lmdb(value.error()));
  }
  auto offset = records::decode_u64(*value);
  if (!offset) return corrupt("offsets of " + partition);
  return static_cast<std::int64_t>(*offset);
}

StoreResult<> trim_pending(StoreEnv& env, const std::string& partition,
                           std::int64_t committed_offset) {
  if (env.read_only()) return store_error(Code::kReadOnly, "index opened read-only");
  return env.write(
      [&](const lmdb::Txn& txn) {
        return pending::trim(txn, env.tables().pending, partition, committed_offset);
      },
      [] {});
}

StoreResult<std::size_t> forget(StoreEnv& env, Catalog& catalog, std::span<const std::string> ids) {
  if (env.read_only()) return store_error(Code::kReadOnly, "index opened read-only");
  const StoreTables& tables = env.tables();
  std::vector<std::uint64_t> forgotten;
  const std::uint64_t documents = catalog.documents;
  Prober prober;
  std::vector<std::uint64_t> candidates;
  auto written = env.write(
      [&](const lmdb::Txn& txn) -> StoreResult<> {
        catalog.mutex.assert_held();  // write() runs the body on this thread
        forgotten.clear();
        catalog.documents = documents;
        if (auto r = lift(catalog.ids->open_directories(txn, env.map_generation())); !r) return r;
        const Documents docs(txn, tables, {}, catalog.config.retention_seconds, catalog.now());
        for (const std::string& id : ids) {
          prober.ids(catalog, id, candidates);
          auto found = docs.find_id(candidates, id);
          if (!found) return std::unexpected(found.error());
          if (!*found || !docs.live((*found)->second)) continue;
          auto& [doc, record] = **found;
          record.flags |= DocRecord::kForgotten;
          if (auto put = DocsTable(tables).rewrite(txn, doc, record); !put) return put;
          if (auto put = lift(tables.forgotten.put(txn, coding::be64_key(doc), "")); !put) {
            return put;
          }
          forgotten.push_back(doc);
          --catalog.documents;
        }
        return lift(tables.meta.put(txn, "documents", records::encode_u64(catalog.documents)));
      },
      [&] {
        catalog.mutex.assert_held();
        catalog.documents = documents;
      });
  if (!written) return std::unexpected(written.error());
  catalog.forgotten.insert(forgotten.begin(), forgotten.end());
  return forgotten.size();
}

StoreResult<Index::DroppedScheme> drop_scheme(StoreEnv& env, Catalog& catalog,
                                              const std::string& id) {
  if (env.read_only()) return store_error(Code::kReadOnly, "index opened read-only");
  auto it = catalog.scheme_numbers.find(id);
  if (it == catalog.scheme_numbers.end()) {
    std::string known;
    for (const auto& [name, number] : catalog.scheme_numbers) {
      known += (known.empty() ? "" : ", ") + name;
    }
    return store_error(Code::kNotFound,
                       "the store " + catalog.config.path + " has no scheme " + id +
                           " (its schemes: " + (known.empty() ? "none" : known) + ")");
  }
  Scheme& scheme = catalog.schemes[it->second];
  Index::DroppedScheme report;
  for (Column* column : catalog.columns_of(scheme)) {
    ++report.columns;
    report.runs += column->state().runs.size();
    for (const auto& run : column->state().runs) report.entries += run.entries;
  }
  const StoreTables& tables = env.tables();
  auto written = env.write(
      [&](const lmdb::Txn& txn) -> StoreResult<> {
        catalog.mutex.assert_held();
        for (Column* column : catalog.columns_of(scheme)) {
          if (auto r = lift(column->drop(txn, tables.meta)); !r) return r;
        }
        if (auto r = trim_sketch_highs(txn, tables, scheme.state.number, ~std::uint64_t{0}); !r) {
          return r;
        }
        if (auto r = trim_passage_log(txn, tables, scheme.state.number, ~std::uint64_t{0}); !r) {
          return r;
        }
        if (tables.has_learned) {  // what it learned from the crawl: a new start learns anew
          std::vector<std::string> learned;
          auto walked = lift(for_each_prefixed(
              txn, tables.learned, id + "/",
              [&](std::string_view key, std::string_view) { learned.emplace_back(key); }));
          if (!walked) return walked;
          for (const std::string& key : learned) {
            if (auto r = lift(tables.learned.del(txn, key)); !r) return r;
          }
        }
        if (auto r = lift(tables.meta.del(txn, "scheme/" + id)); !r) return r;
        return lift(tables.meta.put(txn, "dropped/" + std::to_string(scheme.state.number), id));
      },
      [] {});
  if (!written) return std::unexpected(written.error());
  // Handles of the dropped runs are closed by the commit; the columns go with them.
  scheme.tables.clear();
  scheme.bands.reset();
  scheme.passages.reset();
  scheme.dropped = true;
  catalog.scheme_numbers.erase(it);
  catalog.note_scheme_memory();
  return report;
}

}  // namespace neardup::admin
