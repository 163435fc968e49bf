#include "store/write_path.h"

#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "common/coding.h"
#include "store/distinct.h"
#include "store/passages.h"
#include "store/pending.h"

namespace neardup {
namespace {

using Code = StoreError::Code;
using records::DocRecord;
using Clock = std::chrono::steady_clock;

// A page that does not fit the store (index.h, apply()) is a dead letter of its own.
Verdict unfit(const StoreError& error) {
  return Verdict{.status = Verdict::Status::kDeadLetter,
                 .reason = "invalid_index_item",
                 .detail = error.message};
}

}  // namespace

StoreResult<> check_page(const TableDesign& design, const PageRequest& page, LshDesign lsh) {
  if (page.max_distance > design.k) {
    return store_error(Code::kInvalidArgument, "max_distance " + std::to_string(page.max_distance) +
                                                   " exceeds the index design's k " +
                                                   std::to_string(design.k));
  }
  if (!page.sketch.empty() &&
      (lsh.bands == 0 || lsh.rows == 0 || std::size_t{lsh.bands} * lsh.rows > page.sketch.size())) {
    return store_error(Code::kInvalidArgument, "a sketch of " + std::to_string(page.sketch.size()) +
                                                   " values cannot hold " +
                                                   std::to_string(lsh.bands) + " bands of " +
                                                   std::to_string(lsh.rows) + " rows");
  }
  if (!page.sketch_upper.empty() && page.sketch_upper.size() != page.sketch.size()) {
    return store_error(Code::kInvalidArgument, std::to_string(page.sketch_upper.size()) +
                                                   " upper values for a sketch of " +
                                                   std::to_string(page.sketch.size()));
  }
  return {};
}

StoreResult<> check_sketch_fits(const Scheme& scheme, const PageRequest& page, LshDesign lsh) {
  const records::SchemeState& s = scheme.state;
  if (page.sketch.size() != s.hashes ||
      (s.has_minhash() && (lsh.bands != s.bands || lsh.rows != s.rows))) {
    return store_error(Code::kInvalidArgument,
                       "scheme " + scheme.id + " stores " +
                           (s.has_minhash() ? std::to_string(s.hashes) + "-value sketches in " +
                                                  std::to_string(s.bands) + " x " +
                                                  std::to_string(s.rows) + " bands"
                                            : std::string("no sketches")) +
                           "; the page has " + std::to_string(page.sketch.size()) + " values in " +
                           std::to_string(lsh.bands) + " x " + std::to_string(lsh.rows));
  }
  if (s.wide_bands && page.sketch_upper.empty()) {
    return store_error(Code::kInvalidArgument,
                       "scheme " + scheme.id +
                           " bands its pages by wide keys (32 bits a value: the sketch and its "
                           "upper values); the page carries the sketch's 16 bits alone");
  }
  return {};
}

StoreResult<std::vector<Verdict>> BatchWriter::apply(std::span<const IndexItem> items,
                                                     BatchLearner* learner) {
  if (env_.read_only()) return store_error(Code::kReadOnly, "index opened read-only");
  ++catalog_.batches;
  ApplyTiming* timing = catalog_.options.timing;
  const std::size_t timed = timing ? timing->item_ns.size() : 0;
  std::vector<Verdict> verdicts;
  if (auto grown = env_.grow_ahead(); !grown) return std::unexpected(grown.error());
  const Undo undo{catalog_.next_doc, catalog_.documents, catalog_.schemes.size(),
                  catalog_.stored_samples.size()};
  passages_added_.clear();
  now_ms_ = catalog_.now();
  auto written = env_.write(
      [&](const lmdb::Txn& txn) {
        catalog_.mutex.assert_held();  // write() runs the body on this thread
        return apply_batch(txn, items, learner, verdicts);
      },
      [&] {
        catalog_.mutex.assert_held();
        rollback(undo);
        if (learner != nullptr) learner->undo();
        merges_.discard();
        if (timing) timing->item_ns.resize(timed);
      });
  if (!written) return std::unexpected(written.error());
  merges_.adopt(catalog_);
  catalog_.note_scheme_memory();
  return verdicts;
}

void BatchWriter::rollback(const Undo& undo) {
  // Passages columns the batch created were written to meta in its transaction: gone with it.
  for (std::uint32_t number : passages_added_) {
    if (number < catalog_.schemes.size()) catalog_.schemes[number].passages.reset();
  }
  passages_added_.clear();
  for (Column* column : catalog_.all_columns()) column->delta().undo();
  catalog_.next_doc = undo.next_doc;
  catalog_.documents = undo.documents;
  catalog_.stored_samples.resize(undo.stored_samples);
  std::erase_if(catalog_.scheme_numbers, [&](const auto& s) { return s.second >= undo.schemes; });
  catalog_.schemes.resize(undo.schemes);
}

StoreResult<> BatchWriter::apply_batch(const lmdb::Txn& txn, std::span<const IndexItem> items,
                                       BatchLearner* learner, std::vector<Verdict>& verdicts) {
  const StoreTables& tables = env_.tables();
  verdicts.clear();
  verdicts.reserve(items.size());
  for (Column* column : catalog_.all_columns()) {
    column->delta().mark();
    if (auto r = lift(column->open_directories(txn, env_.map_generation())); !r) return r;
  }
  if (auto merged = merges_.write(catalog_, txn, items.size(), now_ms_); !merged) return merged;
  // Each page's band keys, computed once for its prefetch, probe and insert.
  keys_.resize(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (const auto& page = items[i].page) {
      const Scheme* held = catalog_.scheme(page->scheme);
      make_band_keys(*page, Catalog::lsh_design(*page, held), Catalog::wide_bands(*page, held),
                     keys_[i]);
    } else {
      keys_[i].keys.clear();
    }
  }
  const Documents docs(txn, tables, {}, catalog_.config.retention_seconds, now_ms_);
  appender_.emplace(tables);
  std::map<std::string, pending::Partition, std::less<>> partitions;
  // The lookahead's two steps (Column::prefetch): the directories two pages ahead, the records
  // one page ahead.
  if (items.size() > 1) prefetch(items[1], keys_[1].keys, Column::Lookahead::kDirectories);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const IndexItem& item = items[i];
    if (i + 2 < items.size())
      prefetch(items[i + 2], keys_[i + 2].keys, Column::Lookahead::kDirectories);
    if (i + 1 < items.size()) {
      prefetch(items[i + 1], keys_[i + 1].keys, Column::Lookahead::kRecords);
      advice_.flush();
    }
    pending::Partition* partition = nullptr;
    bool record = true, conflict = false;
    if (item.source) {
      const std::string& name = item.source->partition;
      const std::int64_t offset = item.source->offset;
      auto [it, added] = partitions.try_emplace(name);
      if (added) {
        if (auto value = tables.offsets.get(txn, name)) {
          auto applied = records::decode_u64(*value);
          if (!applied) return corrupt("offsets of " + name);
          it->second.applied = static_cast<std::int64_t>(*applied);
        }
      }
      partition = &it->second;
      if (partition->applied && offset <= *partition->applied) {
        auto in_batch = partition->find(offset);
        if (!in_batch) return std::unexpected(in_batch.error());
        std::optional<pending::Stored> stored = std::move(*in_batch);
        if (!stored) {
          auto found = pending::find(txn, tables.pending, name, offset);
          if (!found) return std::unexpected(found.error());
          stored = std::move(*found);
        }
        // Trimmed (so committed downstream), or applied with another record: answered again
        // (deterministically, by id) but not recorded.
        record = false;
        if (stored && stored->answers(item.source->digest)) {
          stored->verdict.replayed = true;
          verdicts.push_back(std::move(stored->verdict));
          continue;
        }
        conflict = stored.has_value();
      }
    }
    Verdict verdict = item.decided;
    const auto start = Clock::now();
    if (item.page && learner != nullptr) {
      // Finished under what the pages before it taught, its band keys made again.
      PageRequest page = *item.page;
      const bool finished = learner->finish(i, page);
      keys_[i].lsh = {};  // made again by apply_page
      auto decided = apply_page(docs, page, keys_[i]);
      if (!decided) return std::unexpected(decided.error());
      verdict = std::move(*decided);
      if (finished) learner->learned(i, verdict);
    } else if (item.page) {
      auto decided = apply_page(docs, *item.page, keys_[i]);
      if (!decided) return std::unexpected(decided.error());
      verdict = std::move(*decided);
    }
    verdict.offset_conflict = conflict;
    if (partition != nullptr && record) {
      partition->add(item.source->offset, verdict, item.source->digest);
      if (partition->full()) {
        if (auto put = pending::flush(txn, tables.pending, item.source->partition, *partition);
            !put) {
          return put;
        }
      }
    }
    if (ApplyTiming* timing = catalog_.options.timing) {
      timing->item_ns.push_back(static_cast<std::uint32_t>(nanos_since(start)));
    }
    verdicts.push_back(std::move(verdict));
  }
  for (auto& [name, partition] : partitions) {
    if (!partition.dirty) continue;
    if (auto put = pending::flush(txn, tables.pending, name, partition); !put) return put;
    auto put = lift(tables.offsets.put(
        txn, name, records::encode_u64(static_cast<std::uint64_t>(*partition.applied))));
    if (!put) return put;
  }
  if (learner != nullptr) {
    for (const auto& [key, value] : learner->changes()) {
      if (value) {
        if (auto put = lift(tables.learned.put(txn, key, *value)); !put) return put;
      } else if (auto gone = tables.learned.del(txn, key);
                 !gone && gone.error().code != MDB_NOTFOUND) {
        return std::unexpected(from_lmdb(gone.error()));
      }
    }
  }
  return lift(tables.meta.put(txn, "documents", records::encode_u64(catalog_.documents)));
}

void BatchWriter::prefetch(const IndexItem& item, const std::vector<std::uint64_t>& band_keys,
                           Column::Lookahead step) {
  if (!item.page) return;
  Scheme* scheme = catalog_.scheme(item.page->scheme);
  if (scheme == nullptr) return;
  if (step == Column::Lookahead::kDirectories) {
    const std::uint64_t id_key = catalog_.id_key(item.page->id);
    catalog_.ids->delta().prefetch(id_key);
    catalog_.id_filter.prefetch(id_key);
  }
  for (std::size_t t = 0; t < catalog_.design.tables(); ++t) {
    if (catalog_.owns(t))
      scheme->tables[t]->prefetch(catalog_.table_key(t, item.page->fingerprint), step);
  }
  if (scheme->bands) {
    PageAdvice* advice =
        step == Column::Lookahead::kRecords && advice_.enabled() ? &advice_ : nullptr;
    for (std::uint64_t key : band_keys) scheme->bands->prefetch(key, step, advice);
  }
}

void BatchWriter::make_band_keys(const PageRequest& page, LshDesign lsh, bool wide,
                                 BandKeys& keys) {
  keys.keys.clear();
  keys.lsh = lsh;
  keys.wide = wide;
  if (!page.sketch.empty() && check_page(catalog_.design, page, lsh)) {
    catalog_.band_keys(page.sketch, wide ? page.sketch_upper : SketchUpper{}, lsh.bands, lsh.rows,
                       keys.keys);
  }
}

StoreResult<Verdict> BatchWriter::apply_page(const Documents& docs, const PageRequest& page,
                                             BandKeys& band_keys) {
  Scheme* held = catalog_.scheme(page.scheme);
  const LshDesign lsh = Catalog::lsh_design(page, held);
  if (auto valid = check_page(catalog_.design, page, lsh); !valid) return unfit(valid.error());
  // Keys made for another design are made again: a page the learner finished (none made yet),
  // or one that leaves its design to the store, of a scheme an earlier page of this batch added
  // with a design of its own (made for the default).
  const bool wide = Catalog::wide_bands(page, held);
  if (lsh != band_keys.lsh || wide != band_keys.wide) make_band_keys(page, lsh, wide, band_keys);
  const lmdb::Txn& txn = docs.txn();
  const StoreTables& tables = env_.tables();
  if (held == nullptr) {
    if (auto added = catalog_.add_scheme(txn, tables, page.scheme, page); !added) {
      return std::unexpected(added.error());
    }
    held = catalog_.scheme(page.scheme);
  }
  Scheme& scheme = *held;
  const std::uint32_t scheme_number = scheme.state.number;
  scheme.last_batch = catalog_.batches;
  if (auto fits = check_sketch_fits(scheme, page, lsh); !fits) return unfit(fits.error());
  const std::uint64_t id_key = catalog_.id_key(page.id);

  Candidates& found = candidates_;
  prober_.probe(catalog_, scheme, page, band_keys.keys, &id_key, found);
  auto existing = docs.find_id(found.id_docs, page.id);
  if (!existing) return std::unexpected(existing.error());
  // A first-seen time in the future (a crawler's clock, a bad fetched_at) counts as now: it
  // would otherwise never pass store.retention and stay its cluster's root for ever.
  std::int64_t first_seen = std::min(page.seen_at_ms, now_ms_);
  if (*existing) {
    auto& [old_doc, old] = **existing;
    const bool expired = !docs.live(old);
    if (!expired && old.fingerprint == page.fingerprint && old.scheme == scheme_number) {
      auto old_sketch = docs.sketch(old_doc, page.sketch.size());
      if (!old_sketch) return std::unexpected(old_sketch.error());
      if (same_sketch(*old_sketch, page.sketch)) {
        auto stored = docs.stored_verdict(old);
        if (!stored) return stored;
        if (scheme.passages) {
          // What its passages found when it was stored, found again.
          const bool duplicate = old.status == static_cast<std::uint8_t>(Verdict::Status::kDuplicate);
          auto again = relate_passages(docs, scheme, page, duplicate ? old.cluster : 0, *stored,
                                       old_doc);
          if (!again) return std::unexpected(again.error());
        }
        return stored;
      }
    }
    // Re-crawled with new signatures (or past retention, and then seen anew): the old document
    // leaves every lookup.
    if (!expired) first_seen = old.first_seen_ms;
    old.flags |= DocRecord::kSuperseded;
    if (auto put = appender_->rewrite(txn, old_doc, old); !put) {
      return std::unexpected(put.error());
    }
  } else {
    ++catalog_.documents;
  }

  // The old document (if re-crawled) is flagged by now, so it is never its own match.
  auto verdict = decide(docs, scheme.state, scheme.bands != nullptr, page, found);
  if (!verdict) return std::unexpected(verdict.error());
  if (scheme.bands && catalog_.next_doc > kMaxNarrowDoc) {
    return store_error(Code::kFull, "index " + catalog_.config.path +
                                        " has numbered 2^40 documents, the most a band column "
                                        "can hold");
  }
  // The third signature: what the page's text was published in before, and the keys it is the
  // first to have (passages.h).
  Related related;
  const bool has_passages = !page.anchors.empty() || !page.paragraphs.empty();
  if (has_passages && tables.has_passages && !scheme.passages) {
    if (auto added = catalog_.add_passages(txn, tables, scheme); !added) {
      return std::unexpected(added.error());
    }
    passages_added_.push_back(scheme_number);
  }
  if (scheme.passages) {
    const std::uint64_t own_cluster =
        verdict->status == Verdict::Status::kDuplicate ? found.matched_cluster : 0;
    auto decided = relate_passages(docs, scheme, page, own_cluster, *verdict);
    if (!decided) return std::unexpected(decided.error());
    related = std::move(*decided);
  }
  const std::uint64_t doc = catalog_.next_doc++;
  DocRecord record{
      .fingerprint = page.fingerprint,
      .cluster = doc,
      .first_seen_ms = first_seen,
      .scheme = scheme_number,
      .stored_at_s = static_cast<std::uint32_t>(std::max<std::int64_t>(now_ms_ / 1000, 0)),
      .anchors = static_cast<std::uint16_t>(std::min<std::size_t>(page.anchors.size(), 0xffff)),
      .id = page.id};
  if (verdict->status == Verdict::Status::kDuplicate) {
    record.cluster = found.matched_cluster;
    record.matched = found.matched_doc;
    record.status = static_cast<std::uint8_t>(Verdict::Status::kDuplicate);
    record.distance = static_cast<std::uint8_t>(verdict->distance);
    record.method = verdict->method;
    record.similarity = records::quantize_similarity(verdict->similarity);
    auto full = cluster_well_indexed(docs, found.hits, found.matched_cluster);
    if (!full) return std::unexpected(full.error());
    // A shard's clusters are its own view (it sees its share of the matches), not the index's:
    // it indexes every copy.
    if (*full && catalog_.shards == 1) record.flags |= DocRecord::kUnindexed;
  }
  // The sketch goes in the document's own (compact) record: a new document is never numbered
  // before docs_compact_from.
  if (!page.sketch.empty()) record.sketch = records::encode_sketch(page.sketch);
  if (auto put = appender_->append(txn, doc, record); !put) {
    return std::unexpected(put.error());
  }
  if (!page.sketch.empty()) {
    // The rest of each value, until the band column's merge takes the page's band keys into a
    // run: what rebuilding the delta at open needs (FORMAT.md, "sketch_highs").
    if (scheme.bands && is_indexed(record)) {
      // A scheme of wide keys keeps the upper values its bands hold (the first bands x rows).
      const std::size_t banded = std::size_t{scheme.state.bands} * scheme.state.rows;
      const std::span<const std::uint16_t> upper = scheme.state.wide_bands
                                                       ? std::span(page.sketch_upper).first(banded)
                                                       : std::span<const std::uint16_t>{};
      auto high = lift(tables.sketch_highs.put(txn, records::sketch_high_key(scheme_number, doc),
                                               records::encode_sketch_high(page.sketch, upper)));
      if (!high) return std::unexpected(high.error());
    }
  }
  if (!related.relations.empty()) {
    auto put = lift(tables.relations.put(txn, coding::be64_key(doc), related.relations.encode(),
                                         MDB_APPEND));
    if (!put) return std::unexpected(put.error());
  }
  if (!related.fresh.empty()) {
    // Logged until the passages column's merge takes them into a run (FORMAT.md).
    auto put = lift(tables.passage_log.put(txn, records::sketch_high_key(scheme_number, doc),
                                           records::encode_keys(related.fresh)));
    if (!put) return std::unexpected(put.error());
    for (std::uint64_t key : related.fresh) scheme.passages->add({key, doc});
  }
  catalog_.add_entries(doc, record, band_keys.keys);
  if (doc % Catalog::kStoredSampleEvery == 0) {
    catalog_.stored_samples.emplace_back(doc, record.stored_at_s);
  }
  return verdict;
}

StoreResult<Related> BatchWriter::relate_passages(const Documents& docs, Scheme& scheme,
                                                  const PageRequest& page,
                                                  std::uint64_t own_cluster, Verdict& verdict,
                                                  std::uint64_t before) {
  if (page.anchors.empty() && page.paragraphs.empty()) return Related{};
  if (auto r = lift(scheme.passages->open_directories(docs.txn(), env_.map_generation())); !r) {
    return std::unexpected(r.error());
  }
  prober_.holders(catalog_, *scheme.passages, page, holders_);
  return relate(docs, page, holders_, own_cluster, verdict, before);
}

StoreResult<bool> BatchWriter::cluster_well_indexed(
    const Documents& docs, const std::vector<std::pair<int, std::uint64_t>>& hits,
    std::uint64_t cluster) {
  // Every hit is an indexed document within the page's k (unindexed ones have no table
  // entries), found once per table it shares. They are read in the order the probes found them
  // (deterministic for a store), at most a few times the bound, so that a page's work stays
  // bounded whatever the size of its cluster or buckets.
  if (hits.size() < kIndexedCopies) return false;  // too few, whatever they are
  neighbours_.clear();
  std::size_t copies = 0;
  for (const auto& [distance, doc] : hits) {
    if (std::find(neighbours_.begin(), neighbours_.end(), doc) != neighbours_.end()) continue;
    if (neighbours_.size() == 4 * kIndexedCopies) break;
    neighbours_.push_back(doc);
    auto record = docs.get(doc);
    if (!record) return std::unexpected(record.error());
    if (!docs.live(*record) || record->cluster != cluster) continue;
    if (++copies == kIndexedCopies) return true;
  }
  return false;
}

}  // namespace neardup
