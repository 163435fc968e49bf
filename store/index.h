// The index: "was a page within k bits seen before?" for billions of pages (DESIGN.md §5, §6).
//
// An exact permuted-table SimHash index (Manku, Jain, Das Sarma, WWW 2007) in one LMDB
// environment, plus the documents table (id -> fingerprint, cluster, first-seen time, scheme)
// and the per-partition offsets/pending verdicts the daemon needs for replay. Byte layouts are
// in store/FORMAT.md. LMDB allows one writer: apply() is called by one thread only; stats()
// and other readers may run on any thread and never block it. Knows nothing of Kafka or HTML.
#pragma once

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "config/config.h"

namespace neardup {

// What the index says about one page (or, for skipped/dead-lettered records, what the caller
// decided, stored so that a replay of the same offset is answered the same way).
struct Verdict {
  enum class Status : std::uint8_t { kUnique = 0, kDuplicate = 1, kSkipped = 2, kDeadLetter = 3 };
  Status status = Status::kUnique;
  std::string matched;       // kDuplicate: id of the nearest stored page (ties: earliest seen)
  std::string duplicate_of;  // kDuplicate: first-seen id of matched's cluster
  int distance = 0;          // kDuplicate: Hamming distance to matched
  std::string reason;        // kSkipped / kDeadLetter: the reason code
  bool replayed = false;     // answered from stored state (same id+fingerprint, or replayed offset)
  // Fingerprints the probe compared with this page (the permuted-table candidates of every
  // table); 0 when no probe ran (replays, skipped pages). Not stored.
  std::uint32_t candidates = 0;
};

std::string_view status_name(Verdict::Status status);

// Where a record came from, for the daemon's offsets (DESIGN.md §6). Offline runs pass none.
struct SourceOffset {
  std::string partition;  // "topic/partition"
  std::int64_t offset = 0;
};

// One record of a batch, in input order.
struct IndexItem {
  // Set for a fingerprinted page; unset for a skipped/dead-lettered record, whose verdict is
  // given in `decided` and only recorded against its offset.
  struct Page {
    std::string id;
    std::uint64_t fingerprint = 0;
    std::string scheme;              // fingerprints of different schemes are never compared
    std::uint32_t max_distance = 3;  // live k for this page, <= the design's k
    std::int64_t seen_at_ms = 0;     // first-seen time if this id is new
  };
  std::optional<Page> page;
  Verdict decided;  // used when page is unset
  std::optional<SourceOffset> source;
};

struct IndexStats {
  std::uint32_t design_k = 0, design_r = 0, blocks = 0, tables = 0;
  std::vector<std::uint32_t> block_widths;  // bits per block, most significant first
  std::uint32_t format_version = 0;
  std::vector<std::string> schemes;
  std::uint64_t documents = 0;
  std::uint64_t bytes_on_disk = 0;
  std::uint64_t map_size = 0;
  std::vector<std::pair<std::string, std::int64_t>> applied_offsets;  // partition -> last applied
  std::uint64_t pending_verdicts = 0;
  std::uint64_t runs = 0;  // sorted runs on disk, over all columns (FORMAT.md)
};

// Time spent by apply(), accumulated over calls; item_ns gets one entry per item (lookup and
// insert inside the batch transaction, excluding merges and the commit).
struct ApplyTiming {
  std::vector<std::uint32_t> item_ns;
  std::uint64_t merge_ns = 0;   // merging deltas into runs before the batch
  std::uint64_t commit_ns = 0;  // mdb_txn_commit of the batch (fsync when store.sync)
  std::uint64_t merges = 0;
};

struct OpenOptions {
  // Opens an existing store without changing it (for `neardup stats`): fails if there is none;
  // apply(), trim_pending() and lookup() fail; stats() and applied_offset() work while another
  // process writes.
  bool read_only = false;
  // Entries a column keeps in memory before they are merged into its sorted runs on disk. More
  // means fewer, larger merges (less writing) but more memory and a longer rebuild at open.
  std::uint64_t delta_entries = 1ull << 21;
  // When set, apply() records where its time goes (benchmarks).
  ApplyTiming* timing = nullptr;
};

// The nearest stored page of a fingerprint, as lookup() finds it.
struct Match {
  std::string id;
  std::string duplicate_of;  // first-seen id of the match's cluster
  int distance = 0;
};

class Index {
 public:
  // Opens (creating if needed) the index at config.path. Fails with a clear message when the
  // stored design or format version differs from the one config asks for. The design comes from
  // config.design_k and config.tables, or else config.expected_documents (TableDesign::for_store).
  // Errors: a missing directory in read-only mode, LMDB errors (mdb_strerror text), a store of
  // another design or format version.
  static std::expected<std::unique_ptr<Index>, std::string> open(const StoreConfig& config,
                                                                 const OpenOptions& options = {});
  virtual ~Index() = default;

  // Looks up and inserts a batch in one write transaction (group commit), in order: a later
  // item sees the earlier ones. For items with a source at or below the partition's applied
  // offset, the stored verdict is returned (replayed = true) and nothing is applied again.
  // Returns one verdict per item. On failure nothing of the batch is committed. Errors: a page's
  // max_distance above the design's k, the map reaching store.max_map_size (after growing it
  // and retrying), any other LMDB error.
  virtual std::expected<std::vector<Verdict>, std::string> apply(
      std::span<const IndexItem> items) = 0;

  // Last applied offset of a partition, if any.
  virtual std::optional<std::int64_t> applied_offset(const std::string& partition) = 0;

  // Drops stored verdicts of offsets < committed_offset for a partition (they are acknowledged).
  // Serialized with apply(); any thread.
  virtual std::expected<void, std::string> trim_pending(const std::string& partition,
                                                        std::int64_t committed_offset) = 0;

  // Counts and sizes from a read transaction; safe on any thread, never blocks apply(). Fields
  // that could not be read are left at zero.
  virtual IndexStats stats() = 0;

  // The nearest live page of `scheme` within max_distance of fingerprint (ties: earliest
  // stored), without inserting anything. Serialized with apply(). Errors: max_distance above
  // the design's k, read-only mode, LMDB errors.
  virtual std::expected<std::optional<Match>, std::string> lookup(std::uint64_t fingerprint,
                                                                  const std::string& scheme,
                                                                  std::uint32_t max_distance) = 0;
};

}  // namespace neardup
