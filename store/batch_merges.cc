#include "store/batch_merges.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "store/merge_schedule.h"

namespace neardup {

StoreResult<> BatchMerges::write(Catalog& catalog, const lmdb::Txn& txn, std::size_t batch_pages,
                                 std::int64_t now_ms) {
  slices_.clear();
  const auto start = std::chrono::steady_clock::now();
  ApplyTiming* timing = catalog.options.timing;
  const Dropped dropped{catalog.expired_through(now_ms), &catalog.forgotten};
  std::vector<Column*> merging;
  std::vector<MergeDue> due;
  for (auto [column, per_page, idle] : columns_and_rates(catalog)) {
    if (column->full() || (idle && !column->merging() && column->delta().size() > 0)) {
      column->begin_merge(catalog.next_doc - 1, dropped.expired_through > 0);
    }
    const std::uint64_t adds = std::max<std::uint64_t>(1, batch_pages * per_page);
    column->build_union(kUnionBuildPerAdd * adds);
    if (!column->merging()) continue;
    const std::uint64_t size = column->delta().size();
    const std::uint64_t batches_left =
        size < column->capacity()
            ? std::max<std::uint64_t>(1, (column->capacity() - size) / adds / 2)
            : 1;
    merging.push_back(column);
    due.push_back(
        {column->merge_remaining(), batches_left, idle, entries_per_record(column->format())});
  }
  const std::vector<std::uint64_t> budgets = plan_merge_budgets(due, kIdleMergeBudget);
  for (std::size_t i = 0; i < merging.size(); ++i) {
    if (budgets[i] == 0) continue;  // its turn comes when the merges due before it are done
    Column* column = merging[i];
    const auto column_start = std::chrono::steady_clock::now();
    auto slice = lift(column->merge_slice(txn, env_.tables().meta, budgets[i], dropped));
    if (timing && column->format() == RunFormat::kNarrow) {
      timing->band_merge_ns += nanos_since(column_start);
    }
    if (!slice) {
      slice.error().message = "merging " + column->name() + ": " + slice.error().message;
      return std::unexpected(slice.error());
    }
    if (slice->done && column->format() == RunFormat::kNarrow) {
      const auto [number, is_bands] = narrow_scheme(catalog, column);
      const StoreTables& tables = env_.tables();
      auto trimmed = is_bands ? trim_sketch_highs(txn, tables, number, slice->state.watermark)
                              : trim_passage_log(txn, tables, number, slice->state.watermark);
      if (!trimmed) return trimmed;
    }
    slices_.emplace_back(column, std::move(*slice));
  }
  if (timing) timing->merge_ns += nanos_since(start);
  return {};
}

void BatchMerges::adopt(Catalog& catalog) {
  for (auto& [column, slice] : slices_) {
    const bool done = slice.done;
    std::unique_ptr<Delta> merged = column->adopt(std::move(slice));
    if (!done) continue;
    if (column == catalog.ids.get()) add_to_id_filter(catalog, *merged);
    column->recycle(std::move(merged));
    if (ApplyTiming* timing = catalog.options.timing) ++timing->merges;
  }
  slices_.clear();
}

std::vector<std::tuple<Column*, std::uint64_t, bool>> BatchMerges::columns_and_rates(
    Catalog& catalog) {
  std::vector<std::tuple<Column*, std::uint64_t, bool>> out;
  for (auto [column, scheme] : catalog.columns_and_schemes()) {
    std::uint64_t per_page = 1;
    if (scheme && column == scheme->bands.get()) per_page = scheme->state.bands;
    if (scheme && column == scheme->passages.get()) per_page = kPassageKeysPerPage;
    const bool idle = scheme && catalog.batches - scheme->last_batch > kIdleBatches;
    out.emplace_back(column, per_page, idle);
  }
  return out;
}

std::pair<std::uint32_t, bool> BatchMerges::narrow_scheme(Catalog& catalog, const Column* column) {
  for (const Scheme& scheme : catalog.schemes) {
    if (scheme.bands.get() == column) return {scheme.state.number, true};
    if (scheme.passages.get() == column) return {scheme.state.number, false};
  }
  return {0, true};  // not reached: write() asks for the narrow columns of schemes alone
}

namespace {

// Deletes the records of scheme `scheme`'s documents up to `through` from a table keyed by
// sketch_high_key (sketch_highs, passage_log).
StoreResult<> trim_scheme_docs(const lmdb::Txn& txn, lmdb::Dbi table, std::uint32_t scheme,
                               std::uint64_t through) {
  auto cursor = lift(lmdb::Cursor::open(txn, table));
  if (!cursor) return std::unexpected(cursor.error());
  const std::string from = records::sketch_high_key(scheme, 0);
  const std::string last = records::sketch_high_key(scheme, through);
  MDB_val key{from.size(), const_cast<char*>(from.data())}, value{};
  auto at = lift(cursor->get(key, value, MDB_SET_RANGE));
  while (at && *at) {
    const std::string_view found(static_cast<const char*>(key.mv_data), key.mv_size);
    if (found > last) break;
    if (auto deleted = lift(cursor->del()); !deleted) return deleted;
    at = lift(cursor->get(key, value, MDB_NEXT));
  }
  if (!at) return std::unexpected(at.error());
  return {};
}

}  // namespace

StoreResult<> trim_sketch_highs(const lmdb::Txn& txn, const StoreTables& tables,
                                std::uint32_t scheme, std::uint64_t through) {
  if (!tables.has_sketch_highs) return {};
  return trim_scheme_docs(txn, tables.sketch_highs, scheme, through);
}

StoreResult<> trim_passage_log(const lmdb::Txn& txn, const StoreTables& tables,
                               std::uint32_t scheme, std::uint64_t through) {
  if (!tables.has_passages) return {};
  return trim_scheme_docs(txn, tables.passage_log, scheme, through);
}

void BatchMerges::discard() {
  for (auto& [column, slice] : slices_) column->discard(slice);
  slices_.clear();
}

void BatchMerges::add_to_id_filter(Catalog& catalog, const Delta& merged) {
  IdFilter& filter = catalog.id_filter;
  if (filter.size() + merged.size() > filter.capacity()) {
    // On failure no filter (every id probes the runs): slower, never wrong.
    if (!catalog.rebuild_id_filter(env_)) filter = IdFilter();
  } else {
    merged.for_each([&](const Entry& e) {
      catalog.mutex.assert_held();  // called on this thread
      filter.add(e.key);
    });
  }
}

}  // namespace neardup
