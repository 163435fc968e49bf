#include "daemon/merge_state.h"

#include <filesystem>
#include <system_error>

#include "common/coding.h"

namespace neardup::daemon {
namespace {

// How many merge-N slots a directory may hold: more merge stages than this on one machine
// share nothing worth keeping.
constexpr int kMaxSlots = 64;
// Virtual address space only: the file grows with what is written.
constexpr std::uint64_t kMapSize = 1ull << 40;

std::string u64_value(std::int64_t value) {
  std::string out;
  coding::put_fixed64(out, static_cast<std::uint64_t>(value));
  return out;
}

std::optional<std::int64_t> u64_of(std::string_view bytes) {
  if (bytes.size() != 8) return std::nullopt;
  coding::ByteReader in(bytes);
  return static_cast<std::int64_t>(in.u64());
}

std::string partition_value(std::int32_t partition) {
  const auto p = static_cast<std::uint32_t>(partition);
  return {static_cast<char>(p >> 24), static_cast<char>(p >> 16), static_cast<char>(p >> 8),
          static_cast<char>(p)};
}

std::int32_t partition_of(std::string_view bytes) {
  std::uint32_t p = 0;
  for (char c : bytes) p = (p << 8) | static_cast<std::uint8_t>(c);
  return static_cast<std::int32_t>(p);
}

std::string mark_key(const MergeState::InputPartition& input) {
  return input.first + "/" + std::to_string(input.second);
}

std::string failed(const std::string& path, const lmdb::LmdbError& error) {
  return "merge state " + path + ": " + error.message;
}

}  // namespace

std::string encode_consumed(const ConsumedRecord& record) {
  using namespace coding;
  std::string out;
  out.reserve(64 + record.value.size());
  put_fixed32(out, static_cast<std::uint32_t>(record.partition.second));
  put_fixed64(out, static_cast<std::uint64_t>(record.offset));
  put_fixed64(out, static_cast<std::uint64_t>(record.timestamp_ms));
  put_length_prefixed(out, record.partition.first);
  out.push_back(record.key ? 1 : 0);
  put_length_prefixed(out, record.key.value_or(""));
  put_fixed32(out, static_cast<std::uint32_t>(record.headers.size()));
  for (const auto& [name, value] : record.headers) {
    put_length_prefixed(out, name);
    put_length_prefixed(out, value);
  }
  put_length_prefixed(out, record.value);
  return out;
}

std::expected<ConsumedRecord, std::string> decode_consumed(std::string_view bytes) {
  coding::ByteReader in(bytes);
  ConsumedRecord record;
  record.partition.second = static_cast<std::int32_t>(in.u32());
  record.offset = static_cast<std::int64_t>(in.u64());
  record.timestamp_ms = static_cast<std::int64_t>(in.u64());
  record.partition.first = in.length_prefixed();
  const bool keyed = in.u8() != 0;
  std::string key(in.length_prefixed());
  if (keyed) record.key = std::move(key);
  const std::uint32_t headers = in.u32();
  for (std::uint32_t h = 0; h < headers && in.ok(); ++h) {
    std::string name(in.length_prefixed());
    record.headers.emplace_back(std::move(name), in.length_prefixed());
  }
  record.value = in.length_prefixed();
  if (!in.done()) return std::unexpected("a truncated consumed record");
  return record;
}

std::expected<std::unique_ptr<MergeState>, std::string> MergeState::open(const std::string& dir,
                                                                         const std::string& topic) {
  for (int n = 0; n < kMaxSlots; ++n) {
    const std::string path = dir + "/merge-" + std::to_string(n);
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) return std::unexpected("merge state " + path + ": " + ec.message());
    auto lock = WriterLock::acquire(path);
    if (!lock) {
      if (lock.error().code == StoreError::Code::kLocked) continue;  // another stage's
      return std::unexpected("merge state " + path + ": " + lock.error().message);
    }
    auto env = lmdb::Env::open(path, {.map_size = kMapSize, .max_dbs = 8});
    if (!env) return std::unexpected(failed(path, env.error()));
    // Emptied at every open: what it held is read again from Kafka.
    const std::string waiting_path = path + "/waiting";
    std::filesystem::remove_all(waiting_path, ec);
    std::filesystem::create_directories(waiting_path, ec);
    if (ec) return std::unexpected("merge state " + waiting_path + ": " + ec.message());
    auto waiting = lmdb::Env::open(
        waiting_path, {.map_size = kMapSize, .max_dbs = 1, .flags = MDB_NOSYNC | MDB_NOMETASYNC});
    if (!waiting) return std::unexpected(failed(waiting_path, waiting.error()));
    std::unique_ptr<MergeState> state(
        new MergeState(path, std::move(*lock), std::move(*env), std::move(*waiting)));
    if (auto loaded = state->load(topic); !loaded) return std::unexpected(loaded.error());
    return state;
  }
  return std::unexpected("merge state: every one of " + dir + "/merge-0 … merge-" +
                         std::to_string(kMaxSlots - 1) + " is held by a running merge stage");
}

// Opens the databases; reads the marks and positions, or empties them all when they view
// another topic.
std::expected<void, std::string> MergeState::load(const std::string& topic) {
  auto txn = lmdb::Txn::begin(env_, 0);
  if (!txn) return std::unexpected(failed(path_, txn.error()));
  for (auto [db, name] : {std::pair{&decided_db_, "decided"}, std::pair{&marks_db_, "marks"},
                          std::pair{&reached_db_, "reached"}, std::pair{&meta_db_, "meta"}}) {
    auto opened = lmdb::Dbi::open(*txn, name, MDB_CREATE);
    if (!opened) return std::unexpected(failed(path_, opened.error()));
    *db = *opened;
  }
  auto viewed = meta_db_.get(*txn, "topic");
  if (!viewed || *viewed != topic) {
    for (lmdb::Dbi db : {decided_db_, marks_db_, reached_db_}) {
      if (auto dropped = db.drop(*txn, false); !dropped) {
        return std::unexpected(failed(path_, dropped.error()));
      }
    }
    if (auto put = meta_db_.put(*txn, "topic", topic); !put) {
      return std::unexpected(failed(path_, put.error()));
    }
  }
  {
    auto waiting = lmdb::Txn::begin(waiting_env_, 0);
    if (!waiting) return std::unexpected(failed(path_, waiting.error()));
    auto opened = lmdb::Dbi::open(*waiting, "waiting", MDB_CREATE);
    if (!opened) return std::unexpected(failed(path_, opened.error()));
    waiting_db_ = *opened;
    if (auto committed = waiting->commit(); !committed) {
      return std::unexpected(failed(path_, committed.error()));
    }
  }
  for (auto [db, is_mark] : {std::pair{marks_db_, true}, std::pair{reached_db_, false}}) {
    auto cursor = lmdb::Cursor::open(*txn, db);
    if (!cursor) return std::unexpected(failed(path_, cursor.error()));
    MDB_val key{}, value{};
    for (auto got = cursor->get(key, value, MDB_FIRST); got && *got;
         got = cursor->get(key, value, MDB_NEXT)) {
      const std::string_view k = lmdb::to_view(key);
      const std::optional<std::int64_t> offset = u64_of(lmdb::to_view(value));
      if (!offset) return std::unexpected("merge state " + path_ + ": a bad value");
      if (is_mark) {
        const std::size_t slash = k.rfind('/');
        if (slash == std::string_view::npos) return std::unexpected("merge state: a bad mark");
        marks_[{std::string(k.substr(0, slash)),
                std::atoi(std::string(k.substr(slash + 1)).c_str())}] = *offset;
      } else {
        next_[partition_of(k)] = *offset;
      }
    }
  }
  if (auto committed = txn->commit(); !committed) {
    return std::unexpected(failed(path_, committed.error()));
  }
  return {};
}

std::optional<Decided> MergeState::find(const std::string& id) const {
  if (auto own = own_.find(id)) return own;
  auto fail = [&](const std::string& what) {
    if (failure_.empty()) failure_ = path_ + ": looking up " + id + ": " + what;
    return std::nullopt;
  };
  auto decided = [&](std::string_view value) -> std::optional<Decided> {
    auto record = decode_documents_record(id, value);
    if (!record) return fail("a decided record that does not decode: " + record.error());
    return Decided{.verdict = std::move(record->verdict), .source = std::move(record->source)};
  };
  if (auto it = unflushed_.find(id); it != unflushed_.end()) return decided(it->second);
  auto txn = lmdb::Txn::begin(env_, MDB_RDONLY);
  if (!txn) return fail(txn.error().message);
  auto value = decided_db_.get(*txn, id);
  if (!value) {
    if (value.error().code == MDB_NOTFOUND) return std::nullopt;
    return fail(value.error().message);
  }
  return decided(*value);
}

void MergeState::decide(const std::string& id, const Verdict& verdict,
                        const SourcePosition& source) {
  own_.record(id, verdict, source);
}

void MergeState::read(std::int32_t partition, std::int64_t offset, const DocumentsRecord& record) {
  next_[partition] = std::max(next_[partition], offset + 1);
  dirty_ = true;
  if (record.mark) {
    std::int64_t& through = marks_[{record.source.topic, record.source.partition}];
    through = std::max(through, record.source.offset);
    return;
  }
  if (!is_decision(record.verdict)) return;
  own_.forget(record.id, record.source);  // read back
  unflushed_[record.id] = encode_decided(record.id, record.source, record.verdict).second;
}

void MergeState::reached(std::int32_t partition, std::int64_t next) {
  std::int64_t& at = next_[partition];
  if (next > at) {
    at = next;
    dirty_ = true;
  }
}

std::int64_t MergeState::next(std::int32_t partition) const {
  auto it = next_.find(partition);
  return it == next_.end() ? 0 : it->second;
}

std::expected<void, std::string> MergeState::keep(const std::string& key, std::string_view bytes) {
  auto txn = lmdb::Txn::begin(waiting_env_, 0);
  if (!txn) return std::unexpected(failed(path_, txn.error()));
  if (auto put = waiting_db_.put(*txn, key, bytes); !put) {
    return std::unexpected(failed(path_, put.error()));
  }
  if (auto committed = txn->commit(); !committed) {
    return std::unexpected(failed(path_, committed.error()));
  }
  kept_ += 1;
  return {};
}

std::expected<std::string, std::string> MergeState::take(const std::string& key) {
  auto txn = lmdb::Txn::begin(waiting_env_, 0);
  if (!txn) return std::unexpected(failed(path_, txn.error()));
  auto value = waiting_db_.get(*txn, key);
  if (!value) return std::unexpected(failed(path_, value.error()));
  std::string bytes(*value);
  if (auto gone = waiting_db_.del(*txn, key); !gone) {
    return std::unexpected(failed(path_, gone.error()));
  }
  if (auto committed = txn->commit(); !committed) {
    return std::unexpected(failed(path_, committed.error()));
  }
  kept_ -= 1;
  return bytes;
}

std::expected<void, std::string> MergeState::flush() {
  if (!dirty_ && unflushed_.empty()) return {};
  auto txn = lmdb::Txn::begin(env_, 0);
  if (!txn) return std::unexpected(failed(path_, txn.error()));
  for (const auto& [id, value] : unflushed_) {
    if (auto put = decided_db_.put(*txn, id, value); !put) {
      return std::unexpected(failed(path_, put.error()));
    }
  }
  for (const auto& [input, offset] : marks_) {
    if (auto put = marks_db_.put(*txn, mark_key(input), u64_value(offset)); !put) {
      return std::unexpected(failed(path_, put.error()));
    }
  }
  for (const auto& [partition, next] : next_) {
    if (auto put = reached_db_.put(*txn, partition_value(partition), u64_value(next)); !put) {
      return std::unexpected(failed(path_, put.error()));
    }
  }
  if (auto committed = txn->commit(); !committed) {
    return std::unexpected(failed(path_, committed.error()));
  }
  unflushed_.clear();
  dirty_ = false;
  return {};
}

std::expected<void, std::string> MergeState::clear() {
  auto txn = lmdb::Txn::begin(env_, 0);
  if (!txn) return std::unexpected(failed(path_, txn.error()));
  for (lmdb::Dbi db : {decided_db_, marks_db_, reached_db_}) {
    if (auto dropped = db.drop(*txn, false); !dropped) {
      return std::unexpected(failed(path_, dropped.error()));
    }
  }
  if (auto committed = txn->commit(); !committed) {
    return std::unexpected(failed(path_, committed.error()));
  }
  unflushed_.clear();
  marks_.clear();
  next_.clear();
  dirty_ = false;
  return {};
}

std::uint64_t MergeState::stored() const {
  auto txn = lmdb::Txn::begin(env_, MDB_RDONLY);
  if (!txn) return 0;
  auto stat = decided_db_.stat(*txn);
  return stat ? stat->ms_entries : 0;
}

}  // namespace neardup::daemon
