// The stored verdicts of applied offsets (the `pending` database, FORMAT.md): what lets a
// record consumed again after a crash get the verdict it got the first time. Written in the
// index's batch transaction, trimmed once the consumer's committed offset passes them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/lmdb.h"
#include "store/status.h"
#include "store/verdict.h"

namespace neardup::pending {

// A stored verdict and the digest of the record it was given to (0: unknown, version 4).
struct Stored {
  Verdict verdict;
  std::uint64_t digest = 0;

  // Whether a record of digest `digest` may be answered with this verdict: the same record, or
  // either digest unknown.
  bool answers(std::uint64_t record) const {
    return digest == 0 || record == 0 || digest == record;
  }
};

// A partition's state during one batch: its applied mark and the verdicts not yet written.
struct Partition {
  // A record is cut at about this many bytes so that it stays inline in a leaf page.
  static constexpr std::size_t kRecordBytes = 1800;

  std::optional<std::int64_t> applied;
  bool dirty = false;
  std::string record;  // pending entries of offsets after the last written record
  // This batch's verdicts, encoded as stored (an offset seen again in the batch gets what a
  // later batch would read): their offsets and their places in `fresh_bytes`.
  struct Fresh {
    std::int64_t offset;
    std::size_t at, size;
  };
  std::vector<Fresh> fresh;
  std::string fresh_bytes;

  void add(std::int64_t offset, const Verdict& verdict, std::uint64_t digest);
  // This batch's verdict of offset, decoded as stored. Errors: kCorrupt (none that add() wrote).
  StoreResult<std::optional<Stored>> find(std::int64_t offset) const;
  bool full() const { return record.size() >= kRecordBytes; }
};

// Writes the partition's unwritten entries as one record keyed by its last offset.
StoreResult<> flush(const lmdb::Txn& txn, lmdb::Dbi pending, std::string_view partition,
                    Partition& state);

// The stored verdict of an offset, if its record was not trimmed. Errors: LMDB's; kCorrupt.
StoreResult<std::optional<Stored>> find(const lmdb::Txn& txn, lmdb::Dbi pending,
                                        std::string_view partition, std::int64_t offset);

// Deletes the records whose last offset is below committed_offset and rewrites the record that
// straddles it without its older entries. Errors: LMDB's; kCorrupt.
StoreResult<> trim(const lmdb::Txn& txn, lmdb::Dbi pending, const std::string& partition,
                   std::int64_t committed_offset);

}  // namespace neardup::pending
