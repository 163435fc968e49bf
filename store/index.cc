// The LMDB index: permuted tables as LSM columns (store/run.h), documents, ids, offsets and
// pending verdicts in one environment. Byte layouts: store/FORMAT.md.
#include "store/index.h"

#include <sys/stat.h>
#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "store/delta.h"
#include "store/id_filter.h"
#include "store/lmdb.h"
#include "store/run.h"
#include "store/table_design.h"

namespace neardup {

std::string_view status_name(Verdict::Status status) {
  switch (status) {
    case Verdict::Status::kUnique:
      return "unique";
    case Verdict::Status::kDuplicate:
      return "duplicate";
    case Verdict::Status::kSkipped:
      return "skipped";
    case Verdict::Status::kDeadLetter:
      return "dead_letter";
  }
  return "unknown";
}

namespace {

// 1: run records of (key, doc) pairs. 2: run records of n keys, then n docs.
constexpr std::uint32_t kFormatVersion = 2;
// A merge takes the newest runs while each is at most kMergeRatio times what it has gathered
// so far, so runs grow geometrically: few runs to probe, each entry rewritten a few times.
// Measured at 10M pages: 16 (one run per column up to 16x the delta) beat 8 (two runs).
constexpr std::uint64_t kMergeRatio = 16;
constexpr std::uint8_t kSuperseded = 1;  // docs flag: the id was re-indexed under a new document

using lmdb::LmdbError;

using Clock = std::chrono::steady_clock;
std::uint64_t nanos_since(Clock::time_point start) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
}

LmdbError failure(std::string message) { return LmdbError{EINVAL, std::move(message)}; }

std::uint64_t low_mask(std::uint32_t bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

void put_u32(std::string& out, std::uint32_t v) { out.append(reinterpret_cast<char*>(&v), 4); }
void put_u64(std::string& out, std::uint64_t v) { out.append(reinterpret_cast<char*>(&v), 8); }
std::uint32_t get_u32(std::string_view in, std::size_t at) {
  std::uint32_t v = 0;
  if (in.size() >= at + 4) std::memcpy(&v, in.data() + at, 4);
  return v;
}
std::uint64_t get_u64(std::string_view in, std::size_t at) {
  std::uint64_t v = 0;
  if (in.size() >= at + 8) std::memcpy(&v, in.data() + at, 8);
  return v;
}
std::string be64_key(std::uint64_t v) {
  std::string key(8, '\0');
  store_be64(key.data(), v);
  return key;
}

// docs value: fixed 40-byte header (little-endian), then the id bytes.
struct DocRecord {
  std::uint64_t fingerprint = 0;
  std::uint64_t cluster = 0;  // first-seen document of its cluster (itself when unique)
  std::int64_t first_seen_ms = 0;
  std::uint64_t matched = 0;  // duplicate: the nearest document when it was stored
  std::uint32_t scheme = 0;
  std::uint8_t status = 0;  // Verdict::Status it got
  std::uint8_t distance = 0;
  std::uint8_t flags = 0;
  std::string id;

  std::string encode() const {
    std::string out;
    out.reserve(40 + id.size());
    put_u64(out, fingerprint);
    put_u64(out, cluster);
    put_u64(out, static_cast<std::uint64_t>(first_seen_ms));
    put_u64(out, matched);
    put_u32(out, scheme);
    out.push_back(static_cast<char>(status));
    out.push_back(static_cast<char>(distance));
    out.push_back(static_cast<char>(flags));
    out.push_back('\0');
    return out += id;
  }
  static std::optional<DocRecord> decode(std::string_view in) {
    if (in.size() < 40) return std::nullopt;
    return DocRecord{get_u64(in, 0),
                     get_u64(in, 8),
                     static_cast<std::int64_t>(get_u64(in, 16)),
                     get_u64(in, 24),
                     get_u32(in, 32),
                     static_cast<std::uint8_t>(in[36]),
                     static_cast<std::uint8_t>(in[37]),
                     static_cast<std::uint8_t>(in[38]),
                     std::string(in.substr(40))};
  }
};

// pending value: status, distance, then matched, duplicate_of, reason as (u32 length, bytes).
std::string encode_verdict(const Verdict& v) {
  std::string out;
  out.push_back(static_cast<char>(v.status));
  out.push_back(static_cast<char>(std::clamp(v.distance, 0, 255)));
  for (const std::string* s : {&v.matched, &v.duplicate_of, &v.reason}) {
    put_u32(out, static_cast<std::uint32_t>(s->size()));
    out += *s;
  }
  return out;
}
std::optional<Verdict> decode_verdict(std::string_view in) {
  if (in.size() < 2 || static_cast<std::uint8_t>(in[0]) > 3) return std::nullopt;
  Verdict v;
  v.status = static_cast<Verdict::Status>(in[0]);
  v.distance = static_cast<std::uint8_t>(in[1]);
  std::size_t at = 2;
  for (std::string* s : {&v.matched, &v.duplicate_of, &v.reason}) {
    if (in.size() < at + 4) return std::nullopt;
    std::uint32_t n = get_u32(in, at);
    at += 4;
    if (in.size() < at + n) return std::nullopt;
    s->assign(in.substr(at, n));
    at += n;
  }
  return v;
}

// pending key: partition length (1 byte), partition, the record's last offset big-endian with
// the sign flipped, so one partition's records are contiguous and in offset order.
// A pending record holds consecutive entries: offset (i64), verdict length (u32), verdict.
// Records are cut at about kPendingRecordBytes so that they stay inline in LMDB leaf pages.
constexpr std::size_t kPendingRecordBytes = 1800;

void append_pending_entry(std::string& record, std::int64_t offset, const Verdict& verdict) {
  std::string v = encode_verdict(verdict);
  put_u64(record, static_cast<std::uint64_t>(offset));
  put_u32(record, static_cast<std::uint32_t>(v.size()));
  record += v;
}

// Calls fn(offset, verdict bytes) per entry; false when the record is malformed.
template <typename Fn>
bool for_each_pending_entry(std::string_view record, Fn&& fn) {
  for (std::size_t at = 0; at < record.size();) {
    if (record.size() < at + 12) return false;
    auto offset = static_cast<std::int64_t>(get_u64(record, at));
    std::uint32_t n = get_u32(record, at + 8);
    if (record.size() < at + 12 + n) return false;
    fn(offset, record.substr(at + 12, n));
    at += 12 + n;
  }
  return true;
}

std::string pending_key(std::string_view partition, std::int64_t offset) {
  std::string key(1, static_cast<char>(partition.size()));
  key += partition;
  key += be64_key(static_cast<std::uint64_t>(offset) ^ (1ull << 63));
  return key;
}

struct Run {
  std::uint32_t id = 0;
  std::uint64_t entries = 0;
  lmdb::Dbi dbi;
};

// One permuted table of one scheme, or ids: runs on disk plus the in-memory delta.
struct Column {
  std::string name;
  std::uint32_t prefix_bits = 64;
  std::uint64_t watermark = 0;  // documents <= watermark are in the runs, later ones in delta
  std::uint32_t next_run = 1;
  std::vector<Run> runs;  // oldest first
  Delta delta;
  // One per run (RunDirectory), valid while the runs and the map (generation) are unchanged.
  std::vector<RunDirectory> directories;
  std::uint64_t directories_generation = kStale;
  static constexpr std::uint64_t kStale = ~0ull;

  Column(std::string n, std::uint32_t prefix, std::uint32_t bucket_bits, std::uint64_t capacity)
      : name(std::move(n)), prefix_bits(prefix), delta(std::min(prefix, bucket_bits), capacity) {}

  std::string run_name(std::uint32_t run) const { return name + "/" + std::to_string(run); }
  std::string meta_key() const { return "column/" + name; }
  std::string encode_state(const std::vector<Run>& state, std::uint64_t mark,
                           std::uint32_t next) const {
    std::string out;
    put_u64(out, mark);
    put_u32(out, next);
    put_u32(out, static_cast<std::uint32_t>(state.size()));
    for (const Run& run : state) {
      put_u32(out, run.id);
      put_u64(out, run.entries);
    }
    return out;
  }

  // Makes the directories current for map generation `generation` (reloads them from txn when
  // the runs or the map changed since they were loaded).
  lmdb::Result<> open_directories(const lmdb::Txn& txn, std::uint64_t generation) {
    if (directories_generation == generation && directories.size() == runs.size()) return {};
    directories.clear();
    directories_generation = kStale;
    for (const Run& run : runs) {
      auto dir = RunDirectory::load(txn, run.dbi);
      if (!dir) return std::unexpected(dir.error());
      directories.push_back(std::move(*dir));
    }
    directories_generation = generation;
    return {};
  }

  // Probes for every entry with the prefix of `key` (its top prefix_bits): calls fn for the
  // delta's entries now and, unless `with_runs` is false (the caller knows no run holds the
  // prefix), adds one started RunProbe per run to `probes` (see RunProbe).
  template <typename Fn>
  lmdb::Result<> start(std::uint64_t key, std::vector<RunProbe>& probes, Fn&& fn,
                       bool with_runs = true) {
    std::uint64_t lo = key & ~low_mask(64 - prefix_bits), hi = lo | low_mask(64 - prefix_bits);
    delta.scan(lo, hi, fn);
    if (!with_runs) return {};
    for (std::size_t i = 0; i < directories.size(); ++i) {
      probes.emplace_back(directories[i], lo, hi, gap(i));
      if (auto r = probes.back().start(); !r) return r;
    }
    return {};
  }

  // Starts loading what start(key) will read (the delta bucket, each run's record), so that
  // the cache and TLB misses of the next page overlap the work on this one. Directories must
  // be current (open_directories in this transaction).
  void prefetch(std::uint64_t key) const {
    delta.prefetch(key);
    std::uint64_t lo = key & ~low_mask(64 - prefix_bits), hi = lo | low_mask(64 - prefix_bits);
    for (std::size_t i = 0; i < directories.size(); ++i) {
      RunProbe(directories[i], lo, hi, gap(i)).prefetch();
    }
  }

  // The expected distance between neighbouring keys of run i (RunProbe).
  double gap(std::size_t i) const {
    return std::ldexp(1.0, 64) / static_cast<double>(std::max<std::uint64_t>(runs[i].entries, 1));
  }
};

class LmdbIndex final : public Index {
 public:
  LmdbIndex(const StoreConfig& config, const OpenOptions& options)
      : config_(config), options_(options) {
    bucket_bits_ = std::clamp<std::uint32_t>(std::bit_width(options.delta_entries), 8, 20);
  }

  std::expected<void, std::string> open() {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (options_.read_only) {
      if (!fs::exists(fs::path(config_.path) / "data.mdb", ec)) {
        return std::unexpected("no index at " + config_.path + " (no data.mdb)");
      }
    } else if (!fs::create_directories(config_.path, ec) && ec) {
      return std::unexpected("cannot create " + config_.path + ": " + ec.message());
    }
    unsigned flags = MDB_NOTLS | (options_.read_only ? MDB_RDONLY : 0) |
                     (config_.sync || options_.read_only ? 0 : MDB_NOSYNC);
    auto env = lmdb::Env::open(config_.path, {.map_size = config_.map_size, .flags = flags});
    if (!env) return std::unexpected(env.error().message);
    env_ = std::move(*env);
    if (auto loaded = options_.read_only ? load_read_only() : load_or_create(); !loaded) {
      return std::unexpected("index " + config_.path + ": " + loaded.error().message);
    }
    return {};
  }

  std::expected<std::vector<Verdict>, std::string> apply(
      std::span<const IndexItem> items) override {
    std::lock_guard writer(writer_);
    if (options_.read_only) return std::unexpected("index opened read-only");
    ApplyTiming* timing = options_.timing;
    for (auto* column : all_columns()) {
      if (column->delta.size() >= options_.delta_entries) {
        auto start = Clock::now();
        if (auto merged = merge(*column); !merged) return std::unexpected(merged.error());
        if (timing) {
          timing->merge_ns += nanos_since(start);
          ++timing->merges;
        }
      }
    }
    std::size_t timed = timing ? timing->item_ns.size() : 0;
    std::vector<Verdict> verdicts;
    BatchUndo undo{next_doc_, documents_, schemes_.size()};
    auto written = write([&](const lmdb::Txn& txn) { return apply_batch(txn, items, verdicts); },
                         [&] {
                           rollback(undo);
                           if (timing) timing->item_ns.resize(timed);
                         });
    if (!written) return std::unexpected(written.error());
    return verdicts;
  }

  std::optional<std::int64_t> applied_offset(const std::string& partition) override {
    std::shared_lock lock(map_lock_);
    auto txn = begin_read();
    if (!txn) return std::nullopt;
    auto value = offsets_.get(*txn, partition);
    if (!value || value->size() != 8) return std::nullopt;
    return static_cast<std::int64_t>(get_u64(*value, 0));
  }

  std::expected<void, std::string> trim_pending(const std::string& partition,
                                                std::int64_t committed_offset) override {
    std::lock_guard writer(writer_);
    if (options_.read_only) return std::unexpected("index opened read-only");
    return write(
        [&](const lmdb::Txn& txn) -> lmdb::Result<> {
          auto cursor = lmdb::Cursor::open(txn, pending_);
          if (!cursor) return std::unexpected(cursor.error());
          std::string first = pending_key(partition, std::numeric_limits<std::int64_t>::min());
          std::string end = pending_key(partition, committed_offset);
          MDB_val key = lmdb::to_val(first), value{};
          for (auto found = cursor->get(key, value, MDB_SET_RANGE);;) {
            if (!found) return std::unexpected(found.error());
            if (!*found || !lmdb::to_view(key).starts_with(first.substr(0, first.size() - 8))) {
              return {};
            }
            if (lmdb::to_view(key) >= end) break;  // the first record reaching committed_offset
            if (auto del = cursor->del(); !del) return del;
            found = cursor->get(key, value, MDB_NEXT);  // after a delete: the following item
          }
          // Drop the older entries of the record that straddles committed_offset.
          std::string kept;
          bool ok = for_each_pending_entry(
              lmdb::to_view(value), [&](std::int64_t offset, std::string_view verdict) {
                if (offset < committed_offset) return;
                put_u64(kept, static_cast<std::uint64_t>(offset));
                put_u32(kept, static_cast<std::uint32_t>(verdict.size()));
                kept += verdict;
              });
          if (!ok)
            return std::unexpected(failure("pending record of " + partition + " is corrupt"));
          if (kept.size() == value.mv_size) return {};
          std::string record_key(lmdb::to_view(key));
          cursor = lmdb::Cursor();  // before the put: it may move the pages under the cursor
          return pending_.put(txn, record_key, kept);
        },
        [] {});
  }

  IndexStats stats() override {
    IndexStats s{.design_k = design_.k,
                 .design_r = design_.r,
                 .blocks = static_cast<std::uint32_t>(design_.block_width.size()),
                 .tables = static_cast<std::uint32_t>(design_.tables()),
                 .block_widths = design_.block_width,
                 .format_version = kFormatVersion};
    struct stat st {};
    if (::stat((std::filesystem::path(config_.path) / "data.mdb").c_str(), &st) == 0) {
      s.bytes_on_disk = static_cast<std::uint64_t>(st.st_blocks) * 512;
    }
    std::shared_lock lock(map_lock_);
    if (auto info = env_.info()) s.map_size = info->me_mapsize;
    auto txn = begin_read();
    if (!txn) return s;
    if (auto docs = meta_.get(*txn, "documents")) s.documents = get_u64(*docs, 0);
    for_each_prefixed(*txn, meta_, "scheme/", [&](std::string_view key, std::string_view) {
      s.schemes.emplace_back(key.substr(7));
    });
    for_each_prefixed(*txn, meta_, "column/", [&](std::string_view, std::string_view value) {
      s.runs += get_u32(value, 12);
    });
    for_each_prefixed(*txn, offsets_, "", [&](std::string_view key, std::string_view value) {
      s.applied_offsets.emplace_back(key, static_cast<std::int64_t>(get_u64(value, 0)));
    });
    for_each_prefixed(*txn, pending_, "", [&](std::string_view, std::string_view record) {
      for_each_pending_entry(record, [&](std::int64_t, std::string_view) { ++s.pending_verdicts; });
    });
    return s;
  }

  std::expected<std::optional<Match>, std::string> lookup(std::uint64_t fingerprint,
                                                          const std::string& scheme,
                                                          std::uint32_t max_distance) override {
    std::lock_guard writer(writer_);
    if (options_.read_only) return std::unexpected("index opened read-only");
    if (max_distance > design_.k) return std::unexpected(too_far(max_distance));
    auto it = schemes_.find(scheme);
    if (it == schemes_.end()) return std::nullopt;
    auto txn = lmdb::Txn::begin(env_, MDB_RDONLY);
    if (!txn) return std::unexpected(txn.error().message);
    std::optional<Match> match;
    auto found = [&]() -> lmdb::Result<> {
      for (auto& column : tables_[it->second]) {
        if (auto r = column->open_directories(*txn, map_generation_); !r) return r;
      }
      Candidates& found = candidates_;
      auto probed = probe(it->second, fingerprint, max_distance, nullptr, found);
      probes_.clear();
      if (!probed) return std::unexpected(probed.error());
      auto best = nearest(*txn, found.hits);
      if (!best) return std::unexpected(best.error());
      if (!*best) return {};
      auto cluster = get_doc(*txn, (*best)->record.cluster);
      if (!cluster) return std::unexpected(cluster.error());
      match = Match{(*best)->record.id, cluster->id, (*best)->distance};
      return {};
    }();
    if (!found) return std::unexpected(found.error().message);
    return match;
  }

 private:
  struct BatchUndo {
    std::uint64_t next_doc, documents;
    std::size_t schemes;
  };
  struct Hit {
    std::uint64_t doc;
    int distance;
    DocRecord record;
  };
  // A partition's state during one batch: its applied mark and the verdicts not yet written.
  struct Partition {
    std::optional<std::int64_t> applied;
    bool dirty = false;
    std::string record;  // pending entries of offsets after the last written record
    std::vector<std::pair<std::int64_t, Verdict>> fresh;  // this batch's verdicts

    void add(std::int64_t offset, const Verdict& verdict) {
      append_pending_entry(record, offset, verdict);
      fresh.emplace_back(offset, verdict);
      applied = offset;
      dirty = true;
    }
    std::optional<Verdict> find(std::int64_t offset) const {
      for (auto it = fresh.rbegin(); it != fresh.rend(); ++it) {
        if (it->first == offset) return it->second;
      }
      return std::nullopt;
    }
  };

  // Writes the partition's unwritten pending entries as one record keyed by the last offset.
  lmdb::Result<> flush_pending(const lmdb::Txn& txn, std::string_view name, Partition& partition) {
    if (partition.record.empty()) return {};
    auto put = pending_.put(txn, pending_key(name, *partition.applied), partition.record);
    partition.record.clear();
    return put;
  }

  // The stored verdict of an offset, if its record was not trimmed.
  lmdb::Result<std::optional<Verdict>> find_pending(const lmdb::Txn& txn, std::string_view name,
                                                    std::int64_t offset) {
    auto cursor = lmdb::Cursor::open(txn, pending_);
    if (!cursor) return std::unexpected(cursor.error());
    std::string probe = pending_key(name, offset);
    MDB_val key = lmdb::to_val(probe), value{};
    auto found = cursor->get(key, value, MDB_SET_RANGE);
    if (!found) return std::unexpected(found.error());
    if (!*found || !lmdb::to_view(key).starts_with(probe.substr(0, probe.size() - 8))) {
      return std::nullopt;
    }
    std::optional<Verdict> verdict;
    bool ok =
        for_each_pending_entry(lmdb::to_view(value), [&](std::int64_t at, std::string_view v) {
          if (at == offset) verdict = decode_verdict(v);
        });
    if (!ok || (verdict && verdict->status > Verdict::Status::kDeadLetter)) {
      return std::unexpected(failure("pending record of " + std::string(name) + " is corrupt"));
    }
    return verdict;
  }

  static std::string too_far(std::uint32_t max_distance) {
    return "max_distance " + std::to_string(max_distance) + " exceeds the index design's k";
  }

  std::vector<Column*> all_columns() {
    std::vector<Column*> out;
    for (auto& scheme : tables_) {
      for (auto& column : scheme) out.push_back(column.get());
    }
    if (ids_) out.push_back(ids_.get());
    return out;
  }

  lmdb::Result<lmdb::Txn> begin_read() {
    auto txn = lmdb::Txn::begin(env_, MDB_RDONLY);
    if (!txn && txn.error().code == MDB_MAP_RESIZED && options_.read_only) {
      // Another process grew the map: adopt its size (no other transaction of ours is open).
      if (auto adopted = env_.set_map_size(0); !adopted) return std::unexpected(adopted.error());
      txn = lmdb::Txn::begin(env_, MDB_RDONLY);
    }
    return txn;
  }

  // Runs body in a write transaction and commits it. On MDB_MAP_FULL (from body or commit):
  // aborts, calls undo, doubles the map up to store.max_map_size and runs body again.
  template <typename Body, typename Undo>
  std::expected<void, std::string> write(Body&& body, Undo&& undo) {
    while (true) {
      auto txn = lmdb::Txn::begin(env_, 0);
      if (!txn) return std::unexpected(txn.error().message);
      auto done = body(*txn);
      if (!done) {
        undo();  // first: it closes cursors that LMDB frees with the transaction
        txn->abort();
      } else {
        auto start = Clock::now();
        done = txn->commit();
        if (options_.timing) options_.timing->commit_ns += nanos_since(start);
        if (!done) undo();
      }
      if (done) return {};
      if (!done.error().map_full()) return std::unexpected(done.error().message);
      if (auto grown = grow(); !grown) return grown;
    }
  }

  std::expected<void, std::string> grow() {
    std::unique_lock lock(map_lock_);
    auto info = env_.info();
    if (!info) return std::unexpected(info.error().message);
    std::uint64_t size = info->me_mapsize;
    if (size >= config_.max_map_size) {
      return std::unexpected("index " + config_.path +
                             " is full: the map reached store.max_map_size (" +
                             std::to_string(config_.max_map_size) +
                             " bytes); raise it to store more (nothing committed was lost)");
    }
    std::uint64_t grown = std::min(size * 2, config_.max_map_size);
    if (auto set = env_.set_map_size(grown); !set) return std::unexpected(set.error().message);
    ++map_generation_;  // the map moved: every RunDirectory points into the old one
    return {};
  }

  template <typename Fn>
  lmdb::Result<> for_each_prefixed(const lmdb::Txn& txn, lmdb::Dbi dbi, std::string_view prefix,
                                   Fn&& fn) {
    auto cursor = lmdb::Cursor::open(txn, dbi);
    if (!cursor) return std::unexpected(cursor.error());
    MDB_val key = lmdb::to_val(prefix), value{};
    for (auto found = cursor->get(key, value, prefix.empty() ? MDB_FIRST : MDB_SET_RANGE);;
         found = cursor->get(key, value, MDB_NEXT)) {
      if (!found) return std::unexpected(found.error());
      if (!*found || !lmdb::to_view(key).starts_with(prefix)) return {};
      fn(lmdb::to_view(key), lmdb::to_view(value));
    }
  }

  lmdb::Result<DocRecord> get_doc(const lmdb::Txn& txn, std::uint64_t doc) {
    auto value = docs_.get(txn, be64_key(doc));
    if (!value) return std::unexpected(value.error());
    auto record = DocRecord::decode(*value);
    if (!record)
      return std::unexpected(failure("docs record " + std::to_string(doc) + " is corrupt"));
    return *record;
  }

  // ---- open ----

  lmdb::Result<> open_dbis(const lmdb::Txn& txn, unsigned flags) {
    using Named = std::pair<lmdb::Dbi*, const char*>;
    for (auto [dbi, name] : std::initializer_list<Named>{
             {&meta_, "meta"}, {&docs_, "docs"}, {&offsets_, "offsets"}, {&pending_, "pending"}}) {
      auto opened = lmdb::Dbi::open(txn, name, flags);
      if (!opened) return std::unexpected(opened.error());
      *dbi = *opened;
    }
    return {};
  }

  lmdb::Result<> load_read_only() {
    auto txn = begin_read();
    if (!txn) return std::unexpected(txn.error());
    if (auto opened = open_dbis(*txn, 0); !opened) {
      return std::unexpected(failure("not a neardup index (" + opened.error().message + ")"));
    }
    auto format = meta_.get(*txn, "format");
    auto stored = meta_.get(*txn, "design");
    if (!format || !stored) return std::unexpected(failure("not a neardup index (no meta)"));
    if (get_u32(*format, 0) != kFormatVersion) return std::unexpected(format_mismatch(*format));
    design_ = TableDesign::make(get_u32(*stored, 0), get_u32(*stored, 4));
    return txn->commit();  // makes the handles opened in it usable by later transactions
  }

  LmdbError format_mismatch(std::string_view format) {
    return failure("format version " + std::to_string(get_u32(format, 0)) +
                   " on disk, this build reads version " + std::to_string(kFormatVersion) +
                   " (no conversion: rebuild the index)");
  }

  lmdb::Result<> load_or_create() {
    auto wanted =
        TableDesign::for_store(config_.design_k, config_.expected_documents, config_.tables);
    if (!wanted) return std::unexpected(failure(wanted.error()));
    design_ = *wanted;
    auto loaded = write(
        [&](const lmdb::Txn& txn) -> lmdb::Result<> {
          if (auto opened = open_dbis(txn, MDB_CREATE); !opened) return opened;
          auto format = meta_.get(txn, "format");
          if (!format) {
            if (format.error().code != MDB_NOTFOUND) return std::unexpected(format.error());
            std::string f, d;
            put_u32(f, kFormatVersion);
            put_u32(d, design_.k);
            put_u32(d, design_.r);
            put_u32(d, static_cast<std::uint32_t>(design_.tables()));
            if (auto p = meta_.put(txn, "format", f); !p) return p;
            if (auto p = meta_.put(txn, "design", d); !p) return p;
          } else if (get_u32(*format, 0) != kFormatVersion) {
            return std::unexpected(format_mismatch(*format));
          }
          auto stored = meta_.get(txn, "design");
          if (!stored) return std::unexpected(failure("meta has no design"));
          std::uint32_t k = get_u32(*stored, 0), r = get_u32(*stored, 4);
          if (k != design_.k || r != design_.r) {
            return std::unexpected(failure(
                "stored design is k=" + std::to_string(k) + " r=" + std::to_string(r) + " (" +
                std::to_string(get_u32(*stored, 8)) +
                " tables) but the config asks for k=" + std::to_string(design_.k) +
                " r=" + std::to_string(design_.r) + " (" + std::to_string(design_.tables()) +
                " tables; store.design_k, store.tables, store.expected_documents): rebuild the "
                "index or set store.design_k and store.tables to the stored design"));
          }
          return load_state(txn);
        },
        [&] {
          schemes_.clear();
          tables_.clear();
          ids_.reset();
        });
    if (!loaded) return std::unexpected(failure(loaded.error()));
    if (auto built = rebuild_id_filter(); !built) return built;
    return rebuild_deltas();
  }

  // Fills a new id filter with every hash in the ids column's runs, sized for twice what they
  // hold (at least kMinIdFilter): memory follows the stored ids, not the configured size.
  lmdb::Result<> rebuild_id_filter() {
    constexpr std::uint64_t kMinIdFilter = 1ull << 22;  // 6 MiB
    std::uint64_t entries = 0;
    for (const Run& run : ids_->runs) entries += run.entries;
    IdFilter filter(std::max<std::uint64_t>(kMinIdFilter, 2 * entries));
    auto txn = lmdb::Txn::begin(env_, MDB_RDONLY);
    if (!txn) return std::unexpected(txn.error());
    for (const Run& run : ids_->runs) {
      auto reader = RunReader::open(*txn, run.dbi);
      if (!reader) return std::unexpected(reader.error());
      while (!reader->done()) {
        filter.add(reader->current().key);
        if (auto next = reader->next(); !next) return next;
      }
    }
    id_filter_ = std::move(filter);
    return {};
  }

  // Loads counters, schemes and columns (creating the ids column on a new index).
  lmdb::Result<> load_state(const lmdb::Txn& txn) {
    auto docs_cursor = lmdb::Cursor::open(txn, docs_);
    if (!docs_cursor) return std::unexpected(docs_cursor.error());
    MDB_val key{}, value{};
    auto last = docs_cursor->get(key, value, MDB_LAST);
    if (!last) return std::unexpected(last.error());
    next_doc_ = *last ? load_be64(static_cast<const char*>(key.mv_data)) + 1 : 1;
    *docs_cursor = lmdb::Cursor();
    if (auto docs = meta_.get(txn, "documents")) documents_ = get_u64(*docs, 0);

    std::vector<std::pair<std::string, std::uint32_t>> schemes;
    auto listed =
        for_each_prefixed(txn, meta_, "scheme/", [&](std::string_view k, std::string_view v) {
          schemes.emplace_back(std::string(k.substr(7)), get_u32(v, 0));
        });
    if (!listed) return listed;
    std::sort(schemes.begin(), schemes.end(),
              [](const auto& a, const auto& b) { return a.second < b.second; });
    for (const auto& [name, index] : schemes) {
      if (index != tables_.size()) return std::unexpected(failure("scheme numbers are not dense"));
      if (auto added = add_scheme(txn, name, false); !added) return added;
    }
    ids_ = std::make_unique<Column>("ids", 64, bucket_bits_, options_.delta_entries);
    return load_column(txn, *ids_, true);
  }

  // Reads a column's state from meta, or (create) writes a new one starting at the current end
  // of docs.
  lmdb::Result<> load_column(const lmdb::Txn& txn, Column& column, bool create) {
    auto state = meta_.get(txn, column.meta_key());
    if (!state) {
      if (state.error().code != MDB_NOTFOUND || !create) return std::unexpected(state.error());
      column.watermark = next_doc_ - 1;
      return meta_.put(txn, column.meta_key(), column.encode_state({}, column.watermark, 1));
    }
    column.watermark = get_u64(*state, 0);
    column.next_run = get_u32(*state, 8);
    std::uint32_t runs = get_u32(*state, 12);
    std::string copy(*state);
    for (std::uint32_t i = 0; i < runs; ++i) {
      Run run{get_u32(copy, 16 + 12 * i), get_u64(copy, 20 + 12 * i), {}};
      auto dbi = lmdb::Dbi::open(txn, column.run_name(run.id), 0);
      if (!dbi) return std::unexpected(dbi.error());
      run.dbi = *dbi;
      column.runs.push_back(run);
    }
    return {};
  }

  // Registers a scheme and its table columns (create: writes them to meta in txn).
  lmdb::Result<> add_scheme(const lmdb::Txn& txn, const std::string& name, bool create) {
    std::uint32_t index = static_cast<std::uint32_t>(tables_.size());
    if (create) {
      std::string v;
      put_u32(v, index);
      if (auto p = meta_.put(txn, "scheme/" + name, v); !p) return p;
    }
    schemes_[name] = index;
    auto& columns = tables_.emplace_back();
    for (std::size_t t = 0; t < design_.tables(); ++t) {
      columns.push_back(
          std::make_unique<Column>("t/" + std::to_string(index) + "/" + std::to_string(t),
                                   design_.prefix_bits(t), bucket_bits_, options_.delta_entries));
      if (auto loaded = load_column(txn, *columns.back(), create); !loaded) return loaded;
    }
    return {};
  }

  // The docs table is the deltas' log: re-adds every document past a column's watermark.
  lmdb::Result<> rebuild_deltas() {
    std::uint64_t from = ids_->watermark;
    for (auto* column : all_columns()) from = std::min(from, column->watermark);
    auto txn = lmdb::Txn::begin(env_, MDB_RDONLY);
    if (!txn) return std::unexpected(txn.error());
    auto cursor = lmdb::Cursor::open(*txn, docs_);
    if (!cursor) return std::unexpected(cursor.error());
    std::string start = be64_key(from + 1);
    MDB_val key = lmdb::to_val(start), value{};
    for (auto found = cursor->get(key, value, MDB_SET_RANGE);;
         found = cursor->get(key, value, MDB_NEXT)) {
      if (!found) return std::unexpected(found.error());
      if (!*found) break;
      std::uint64_t doc = load_be64(static_cast<const char*>(key.mv_data));
      auto record = DocRecord::decode(lmdb::to_view(value));
      if (!record || record->scheme >= tables_.size()) {
        return std::unexpected(failure("docs record " + std::to_string(doc) + " is corrupt"));
      }
      add_entries(doc, *record);
    }
    for (auto* column : all_columns()) column->delta.mark();
    return {};
  }

  void add_entries(std::uint64_t doc, const DocRecord& record) {
    if (doc > ids_->watermark) {
      ids_->delta.add({XXH3_64bits(record.id.data(), record.id.size()), doc});
    }
    auto& columns = tables_[record.scheme];
    for (std::size_t t = 0; t < columns.size(); ++t) {
      if (doc > columns[t]->watermark) {
        columns[t]->delta.add({design_.permute(t, record.fingerprint), doc});
      }
    }
  }

  // ---- merge ----

  // Writes the column's delta and its newest runs (kMergeRatio) into one new run, in one
  // write transaction; drops the merged runs.
  std::expected<void, std::string> merge(Column& column) {
    std::vector<Entry> fresh = column.delta.sorted();
    std::uint64_t total = fresh.size();
    std::size_t keep = column.runs.size();
    while (keep > 0 && column.runs[keep - 1].entries <= kMergeRatio * total) {
      total += column.runs[--keep].entries;
    }
    std::vector<Run> next;
    std::uint64_t mark = next_doc_ - 1;
    auto written = write(
        [&](const lmdb::Txn& txn) -> lmdb::Result<> {
          Run merged{column.next_run, total, {}};
          auto dbi = lmdb::Dbi::open(txn, column.run_name(merged.id), MDB_CREATE);
          if (!dbi) return std::unexpected(dbi.error());
          merged.dbi = *dbi;
          std::vector<lmdb::Dbi> inputs;
          for (std::size_t i = keep; i < column.runs.size(); ++i) {
            // Reopened by name: an aborted attempt's mdb_drop closed the handle.
            auto input = lmdb::Dbi::open(txn, column.run_name(column.runs[i].id), 0);
            if (!input) return std::unexpected(input.error());
            inputs.push_back(*input);
          }
          if (auto r = merge_runs(txn, fresh, inputs, merged.dbi); !r) return r;
          for (lmdb::Dbi input : inputs) {
            if (auto r = input.drop(txn, true); !r) return r;
          }
          next.assign(column.runs.begin(), column.runs.begin() + static_cast<long>(keep));
          next.push_back(merged);
          return meta_.put(txn, column.meta_key(),
                           column.encode_state(next, mark, column.next_run + 1));
        },
        [] {});
    if (!written) return std::unexpected("merging " + column.name + ": " + written.error());
    column.runs = std::move(next);
    column.watermark = mark;
    ++column.next_run;
    column.delta.clear();
    column.directories_generation = Column::kStale;
    if (&column == ids_.get()) {
      // The merged delta is in the runs now: the filter must report its hashes.
      if (id_filter_.size() + fresh.size() > id_filter_.capacity()) {
        // On failure no filter (every id probes the runs): slower, never wrong.
        if (!rebuild_id_filter()) id_filter_ = IdFilter();
      } else {
        for (const Entry& e : fresh) id_filter_.add(e.key);
      }
    }
    return {};
  }

  // ---- apply ----

  void rollback(const BatchUndo& undo) {
    for (auto* column : all_columns()) {
      column->delta.undo();
    }
    next_doc_ = undo.next_doc;
    documents_ = undo.documents;
    std::erase_if(schemes_, [&](const auto& s) { return s.second >= undo.schemes; });
    tables_.resize(undo.schemes);
  }

  lmdb::Result<> apply_batch(const lmdb::Txn& txn, std::span<const IndexItem> items,
                             std::vector<Verdict>& verdicts) {
    verdicts.clear();
    for (auto* column : all_columns()) {
      column->delta.mark();
      if (auto r = column->open_directories(txn, map_generation_); !r) return r;
    }
    std::map<std::string, Partition, std::less<>> partitions;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const IndexItem& item = items[i];
      if (i + 1 < items.size()) prefetch(items[i + 1]);
      Partition* partition = nullptr;
      bool record = true;
      if (item.source) {
        const auto& [name, offset] = *item.source;
        auto [it, added] = partitions.try_emplace(name);
        if (added) {
          auto value = offsets_.get(txn, name);
          if (value && value->size() == 8) it->second.applied = get_u64(*value, 0);
        }
        partition = &it->second;
        if (partition->applied && offset <= *partition->applied) {
          auto stored = partition->find(offset);
          if (!stored) {
            auto found = find_pending(txn, name, offset);
            if (!found) return std::unexpected(found.error());
            stored = std::move(*found);
          }
          if (stored) {
            stored->replayed = true;
            verdicts.push_back(std::move(*stored));
            continue;
          }
          // Trimmed, so committed downstream: answered again (deterministically, by id) but
          // not recorded.
          record = false;
        }
      }
      Verdict verdict = item.decided;
      auto start = Clock::now();
      if (item.page) {
        auto decided = apply_page(txn, *item.page);
        if (!decided) return std::unexpected(decided.error());
        verdict = std::move(*decided);
      }
      if (partition != nullptr && record) {
        partition->add(item.source->offset, verdict);
        if (partition->record.size() >= kPendingRecordBytes) {
          if (auto put = flush_pending(txn, item.source->partition, *partition); !put) return put;
        }
      }
      if (options_.timing) {
        options_.timing->item_ns.push_back(static_cast<std::uint32_t>(nanos_since(start)));
      }
      verdicts.push_back(std::move(verdict));
    }
    for (auto& [name, partition] : partitions) {
      if (!partition.dirty) continue;
      if (auto put = flush_pending(txn, name, partition); !put) return put;
      std::string v;
      put_u64(v, static_cast<std::uint64_t>(*partition.applied));
      if (auto put = offsets_.put(txn, name, v); !put) return put;
    }
    std::string count;
    put_u64(count, documents_);
    return meta_.put(txn, "documents", count);
  }

  // Starts loading the delta buckets a page will probe, while the previous page is applied.
  void prefetch(const IndexItem& item) const {
    if (!item.page) return;
    auto scheme = schemes_.find(item.page->scheme);
    if (scheme == schemes_.end()) return;
    const std::uint64_t id_hash = XXH3_64bits(item.page->id.data(), item.page->id.size());
    ids_->delta.prefetch(id_hash);
    id_filter_.prefetch(id_hash);
    for (std::size_t t = 0; t < design_.tables(); ++t) {
      tables_[scheme->second][t]->prefetch(design_.permute(t, item.page->fingerprint));
    }
  }

  lmdb::Result<Verdict> apply_page(const lmdb::Txn& txn, const IndexItem::Page& page) {
    if (page.max_distance > design_.k) return std::unexpected(failure(too_far(page.max_distance)));
    auto scheme = schemes_.find(page.scheme);
    if (scheme == schemes_.end()) {
      if (auto added = add_scheme(txn, page.scheme, true); !added)
        return std::unexpected(added.error());
      for (auto& column : tables_.back()) column->delta.mark();
      scheme = schemes_.find(page.scheme);
    }
    const std::uint32_t si = scheme->second;
    const std::uint64_t id_hash = XXH3_64bits(page.id.data(), page.id.size());

    Candidates& found = candidates_;
    if (auto r = probe(si, page.fingerprint, page.max_distance, &id_hash, found); !r) {
      return std::unexpected(r.error());
    }
    auto existing = find_id(txn, found.id_docs, page.id);
    if (!existing) return std::unexpected(existing.error());
    std::int64_t first_seen = page.seen_at_ms;
    if (*existing) {
      auto& [old_doc, old] = **existing;
      if (old.fingerprint == page.fingerprint && old.scheme == si) return stored_verdict(txn, old);
      // Re-crawled with a new fingerprint: the old document leaves every lookup.
      first_seen = old.first_seen_ms;
      old.flags |= kSuperseded;
      if (auto put = docs_.put(txn, be64_key(old_doc), old.encode()); !put) {
        return std::unexpected(put.error());
      }
    } else {
      ++documents_;
    }

    // The old document (if re-crawled) is flagged by now, so it is never its own match.
    auto best = nearest(txn, found.hits);
    if (!best) return std::unexpected(best.error());
    const std::uint64_t doc = next_doc_++;
    DocRecord record{.fingerprint = page.fingerprint,
                     .cluster = doc,
                     .first_seen_ms = first_seen,
                     .scheme = si,
                     .id = page.id};
    Verdict verdict;
    verdict.candidates = static_cast<std::uint32_t>(found.checked);
    if (*best) {
      const Hit& hit = **best;
      record.cluster = hit.record.cluster;
      record.matched = hit.doc;
      record.status = static_cast<std::uint8_t>(Verdict::Status::kDuplicate);
      record.distance = static_cast<std::uint8_t>(hit.distance);
      verdict.status = Verdict::Status::kDuplicate;
      verdict.matched = hit.record.id;
      verdict.distance = hit.distance;
      auto cluster = get_doc(txn, hit.record.cluster);
      if (!cluster) return std::unexpected(cluster.error());
      verdict.duplicate_of = std::move(cluster->id);
    }
    if (auto put = docs_.put(txn, be64_key(doc), record.encode(), MDB_APPEND); !put) {
      return std::unexpected(put.error());
    }
    add_entries(doc, record);
    return verdict;
  }

  // The verdict a document got when it was stored, replayed.
  lmdb::Result<Verdict> stored_verdict(const lmdb::Txn& txn, const DocRecord& record) {
    Verdict verdict;
    verdict.replayed = true;
    verdict.status = static_cast<Verdict::Status>(record.status);
    if (verdict.status == Verdict::Status::kDuplicate) {
      auto matched = get_doc(txn, record.matched);
      auto cluster = get_doc(txn, record.cluster);
      if (!matched) return std::unexpected(matched.error());
      if (!cluster) return std::unexpected(cluster.error());
      verdict.matched = std::move(matched->id);
      verdict.duplicate_of = std::move(cluster->id);
      verdict.distance = record.distance;
    }
    return verdict;
  }

  // Candidates of one page: documents whose id hashes like the page's, and (distance, doc) of
  // the entries within k bits in the scheme's tables. All columns' probes are started before
  // any is finished, so their cache misses overlap.
  struct Candidates {
    std::vector<std::uint64_t> id_docs;
    std::vector<std::pair<int, std::uint64_t>> hits;
    std::uint64_t checked = 0;  // table entries compared with the query
  };
  lmdb::Result<> probe(std::uint32_t si, std::uint64_t fingerprint, std::uint32_t k,
                       const std::uint64_t* id_hash, Candidates& out) {
    out.id_docs.clear();
    out.hits.clear();
    out.checked = 0;
    probes_.clear();
    queries_.clear();
    auto add_id = [&](const Entry& e) { out.id_docs.push_back(e.doc); };
    if (id_hash != nullptr) {
      auto r = ids_->start(*id_hash, probes_, add_id, id_filter_.may_contain(*id_hash));
      if (!r) return r;
    }
    const std::size_t id_probes = probes_.size();
    auto& columns = tables_[si];
    for (std::size_t t = 0; t < columns.size(); ++t) {
      const std::uint64_t key = design_.permute(t, fingerprint);
      auto r = columns[t]->start(key, probes_, [&](const Entry& e) {
        ++out.checked;
        int distance = std::popcount(e.key ^ key);
        if (distance <= static_cast<int>(k)) out.hits.emplace_back(distance, e.doc);
      });
      if (!r) return r;
      queries_.resize(probes_.size() - id_probes, key);
    }
    for (std::size_t i = 0; i < probes_.size(); ++i) {
      lmdb::Result<> r;
      if (i < id_probes) {
        r = probes_[i].finish([&](std::uint64_t, auto doc) { out.id_docs.push_back(doc()); });
      } else {
        const std::uint64_t key = queries_[i - id_probes];
        r = probes_[i].finish([&](std::uint64_t entry_key, auto doc) {
          ++out.checked;
          int distance = std::popcount(entry_key ^ key);
          if (distance <= static_cast<int>(k)) out.hits.emplace_back(distance, doc());
        });
      }
      if (!r) return r;
    }
    return {};
  }

  // The live document stored under an id, among the candidates.
  lmdb::Result<std::optional<std::pair<std::uint64_t, DocRecord>>> find_id(
      const lmdb::Txn& txn, const std::vector<std::uint64_t>& docs, const std::string& id) {
    for (std::uint64_t doc : docs) {
      auto record = get_doc(txn, doc);
      if (!record) return std::unexpected(record.error());
      if (!(record->flags & kSuperseded) && record->id == id) {
        return std::pair{doc, std::move(*record)};
      }
    }
    return std::nullopt;
  }

  // The nearest live document among the hits (ties: the lowest document number).
  lmdb::Result<std::optional<Hit>> nearest(const lmdb::Txn& txn,
                                           std::vector<std::pair<int, std::uint64_t>>& hits) {
    std::sort(hits.begin(), hits.end());
    hits.erase(std::unique(hits.begin(), hits.end()), hits.end());
    for (const auto& [distance, doc] : hits) {
      auto record = get_doc(txn, doc);
      if (!record) return std::unexpected(record.error());
      if (!(record->flags & kSuperseded)) return Hit{doc, distance, std::move(*record)};
    }
    return std::nullopt;
  }

  StoreConfig config_;
  OpenOptions options_;
  std::vector<RunProbe> probes_;        // probe()'s scratch space
  std::vector<std::uint64_t> queries_;  // the permuted key of each table probe
  Candidates candidates_;
  TableDesign design_;
  std::uint32_t bucket_bits_ = 20;
  lmdb::Env env_;
  lmdb::Dbi meta_, docs_, offsets_, pending_;

  // Writer state (apply, trim_pending, lookup; guarded by writer_).
  std::mutex writer_;
  std::map<std::string, std::uint32_t> schemes_;
  std::vector<std::vector<std::unique_ptr<Column>>> tables_;  // [scheme][table]
  std::unique_ptr<Column> ids_;
  IdFilter id_filter_;  // the hashes in ids_'s runs (not its delta)
  std::uint64_t next_doc_ = 1, documents_ = 0;
  std::uint64_t map_generation_ = 0;  // incremented whenever the map is resized

  // Held shared by readers' transactions, exclusively while the map is resized (LMDB: no
  // transaction of the process may be active in mdb_env_set_mapsize).
  std::shared_mutex map_lock_;
};

}  // namespace

std::expected<std::unique_ptr<Index>, std::string> Index::open(const StoreConfig& config,
                                                               const OpenOptions& options) {
  auto index = std::make_unique<LmdbIndex>(config, options);
  if (auto opened = index->open(); !opened) return std::unexpected(opened.error());
  return index;
}

}  // namespace neardup
