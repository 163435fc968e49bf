#include "store/pending.h"

#include <limits>

#include "store/records.h"

namespace neardup::pending {

void Partition::add(std::int64_t offset, const Verdict& verdict, std::uint64_t digest) {
  const std::string encoded = records::encode_verdict(verdict, digest);
  records::append_pending_entry(record, offset, encoded);
  fresh.push_back({offset, fresh_bytes.size(), encoded.size()});
  fresh_bytes += encoded;
  applied = offset;
  dirty = true;
}

StoreResult<std::optional<Stored>> Partition::find(std::int64_t offset) const {
  for (auto it = fresh.rbegin(); it != fresh.rend(); ++it) {
    if (it->offset != offset) continue;
    std::uint64_t digest = 0;
    auto verdict =
        records::decode_verdict(std::string_view(fresh_bytes).substr(it->at, it->size), &digest);
    if (!verdict) return corrupt("verdict of offset " + std::to_string(offset) + " in this batch");
    return Stored{std::move(*verdict), digest};
  }
  return std::nullopt;
}

StoreResult<> flush(const lmdb::Txn& txn, lmdb::Dbi pending, std::string_view partition,
                    Partition& state) {
  if (state.record.empty()) return {};
  auto put = lift(pending.put(txn, records::pending_key(partition, *state.applied), state.record));
  state.record.clear();
  return put;
}

StoreResult<std::optional<Stored>> find(const lmdb::Txn& txn, lmdb::Dbi pending,
                                        std::string_view partition, std::int64_t offset) {
  auto cursor = lift(lmdb::Cursor::open(txn, pending));
  if (!cursor) return std::unexpected(cursor.error());
  const std::string probe = records::pending_key(partition, offset);
  MDB_val key = lmdb::to_val(probe), value{};
  auto found = lift(cursor->get(key, value, MDB_SET_RANGE));
  if (!found) return std::unexpected(found.error());
  if (!*found || !lmdb::to_view(key).starts_with(records::pending_prefix(partition))) {
    return std::nullopt;
  }
  std::optional<Stored> stored;
  bool bad_verdict = false;
  const bool ok = records::for_each_pending_entry(
      lmdb::to_view(value), [&](std::int64_t at, std::string_view v) {
        if (at != offset) return;
        std::uint64_t digest = 0;
        auto verdict = records::decode_verdict(v, &digest);
        bad_verdict = !verdict;
        if (verdict) stored = Stored{std::move(*verdict), digest};
      });
  if (!ok || bad_verdict) return corrupt("pending record of " + std::string(partition));
  return stored;
}

StoreResult<> trim(const lmdb::Txn& txn, lmdb::Dbi pending, const std::string& partition,
                   std::int64_t committed_offset) {
  auto cursor = lift(lmdb::Cursor::open(txn, pending));
  if (!cursor) return std::unexpected(cursor.error());
  const std::string prefix = records::pending_prefix(partition);
  const std::string first =
      records::pending_key(partition, std::numeric_limits<std::int64_t>::min());
  const std::string end = records::pending_key(partition, committed_offset);
  MDB_val key = lmdb::to_val(first), value{};
  for (auto found = lift(cursor->get(key, value, MDB_SET_RANGE));;) {
    if (!found) return std::unexpected(found.error());
    if (!*found || !lmdb::to_view(key).starts_with(prefix)) return {};
    if (lmdb::to_view(key) >= end) break;  // the first record reaching committed_offset
    if (auto del = lift(cursor->del()); !del) return del;
    found = lift(cursor->get(key, value, MDB_NEXT));  // after a delete: the following item
  }
  std::string kept;
  const bool ok = records::for_each_pending_entry(
      lmdb::to_view(value), [&](std::int64_t offset, std::string_view verdict) {
        if (offset >= committed_offset) records::append_pending_entry(kept, offset, verdict);
      });
  if (!ok) return corrupt("pending record of " + partition);
  if (kept.size() == value.mv_size) return {};
  const std::string record_key(lmdb::to_view(key));
  *cursor = lmdb::Cursor();  // before the put: it may move the pages under the cursor
  return lift(pending.put(txn, record_key, kept));
}

}  // namespace neardup::pending
