// What a merge stage knows of the documents topic (message/shard_answer.h: every page the merge
// stages decided, and each input partition's mark), kept on disk so that neither its memory
// nor its start grows with the crawl (docs/scale-out.md, "Decisions").
//
// The state is a view of the topic and nothing else: only records read from the topic are
// written, with how far each documents partition has been read, in one LMDB transaction, so a
// stage that starts again reads on from there rather than from the topic's beginning. Its own
// decisions are kept in memory until it reads them back (their transaction is not committed
// when they are made). A stage's environment is a directory under store.path, merge-N: the
// first that no running stage holds (its lock file, store/writer_lock.h). Any slot serves any
// stage of the same documents topic; a slot that viewed another topic is emptied first.
//
// LMDB databases: "decided" (page id -> the documents record's value), "marks" (input topic
// "/" partition -> u64 offset), "reached" (documents partition, u32 big-endian -> u64 next
// offset to read), "meta" ("topic" -> the documents topic's name).
//
// Beside it, in merge-N/waiting, a second environment keeps records a stage holds while it
// waits for other shards' answers, past what it keeps in memory (keep(), take()). Kafka holds
// them too (the stage commits below them), so that environment is emptied at every open and
// written without fsync.
//
// Not thread-safe: the merge stage's ordered thread owns it.
#pragma once

#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "daemon/work.h"
#include "message/shard_answer.h"
#include "store/lmdb.h"
#include "store/writer_lock.h"

namespace neardup::daemon {

// A consumed record as bytes (MergeState::keep): u32 partition, u64 offset, u64 timestamp,
// topic, then u8 whether it has a key and the key, u32 headers and each name and value, and
// the value (strings a u32 length then the bytes).
std::string encode_consumed(const ConsumedRecord& record);
// The record, or why the bytes are not one.
std::expected<ConsumedRecord, std::string> decode_consumed(std::string_view bytes);

class MergeState final : public DecidedPages {
 public:
  using InputPartition = std::pair<std::string, std::int32_t>;  // input topic, partition

  // Opens (creating it) the first free merge-N under `dir` for documents topic `topic`. The
  // error names the directory and what failed.
  static std::expected<std::unique_ptr<MergeState>, std::string> open(const std::string& dir,
                                                                      const std::string& topic);

  // This stage's decisions first, then what was read. A lookup that fails (the read transaction
  // cannot begin, the record cannot be read or decoded) answers nothing and is kept in
  // failure(): the caller must not use a verdict made meanwhile.
  std::optional<Decided> find(const std::string& id) const override;
  // The first failed lookup, named; empty while none failed. It stays: the stage stops.
  const std::string& failure() const { return failure_; }

  // A page this stage decided (kept in memory until read back from the topic).
  void decide(const std::string& id, const Verdict& verdict, const SourcePosition& source);
  // A record read from documents partition `partition` at `offset`.
  void read(std::int32_t partition, std::int64_t offset, const DocumentsRecord& record);
  // Documents partition `partition` read up to (not including) `next`, with nothing there.
  void reached(std::int32_t partition, std::int64_t next);

  // Where to read a documents partition from: past the last record read (0: its beginning).
  std::int64_t next(std::int32_t partition) const;
  // The marks read: per input partition, the last record decided.
  const std::map<InputPartition, std::int64_t>& marks() const { return marks_; }

  // Keeps `bytes` under `key` in the waiting environment, until take(). Errors: LMDB's, named.
  std::expected<void, std::string> keep(const std::string& key, std::string_view bytes);
  // The bytes kept under `key`, now forgotten. Errors: LMDB's, named; none kept.
  std::expected<std::string, std::string> take(const std::string& key);
  // Records in the waiting environment.
  std::uint64_t kept() const { return kept_; }

  // Writes what was read since the last write, in one transaction. Errors: LMDB's, named.
  std::expected<void, std::string> flush();
  // Forgets everything read (the topic was made anew), at once on disk.
  std::expected<void, std::string> clear();

  const std::string& path() const { return path_; }
  // Decided pages on disk, and read but not yet written.
  std::uint64_t stored() const;
  std::size_t unflushed() const { return unflushed_.size(); }

 private:
  MergeState(std::string path, WriterLock lock, lmdb::Env env, lmdb::Env waiting)
      : path_(std::move(path)),
        lock_(std::move(lock)),
        env_(std::move(env)),
        waiting_env_(std::move(waiting)) {}
  std::expected<void, std::string> load(const std::string& topic);

  const std::string path_;
  mutable std::string failure_;  // find()'s first failure
  WriterLock lock_;
  lmdb::Env env_;
  lmdb::Dbi decided_db_, marks_db_, reached_db_, meta_db_;
  lmdb::Env waiting_env_;
  lmdb::Dbi waiting_db_;
  std::uint64_t kept_ = 0;

  Decisions own_;                                        // decided here, not yet read back
  // Read, not yet written: id -> the documents record's value, as the decided db holds it.
  std::map<std::string, std::string> unflushed_;
  std::map<InputPartition, std::int64_t> marks_;
  std::map<std::int32_t, std::int64_t> next_;
  bool dirty_ = false;  // marks_ or next_ changed since the last flush
};

}  // namespace neardup::daemon
