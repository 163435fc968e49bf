#include "message/shard_answer.h"

#include <bit>
#include <cstring>

#include "common/coding.h"

namespace neardup {
namespace {

constexpr std::string_view kAnswerMagic = "NDSA";

bool is_page_verdict(const Verdict& v) {
  return v.status == Verdict::Status::kUnique || v.status == Verdict::Status::kDuplicate;
}

// The root of the cluster of a decided page: its own id, or what it duplicates.
const std::string& root_of(const std::string& id, const Decided& decided) {
  return decided.verdict.status == Verdict::Status::kDuplicate ? decided.verdict.duplicate_of : id;
}

// Whether match a (read at a_at) goes before match b by the index's rule (store/verdict.h
// Verdict::matched): a SimHash match before a MinHash one; among SimHash matches the nearest,
// among MinHash ones the most similar; ties to the earliest (Decisions).
bool goes_before(const Verdict& a, const SourcePosition& a_at, const Verdict& b,
                 const SourcePosition& b_at) {
  const bool simhash_a = (a.method & Verdict::kSimHash) != 0;
  const bool simhash_b = (b.method & Verdict::kSimHash) != 0;
  if (simhash_a != simhash_b) return simhash_a;
  if (simhash_a && a.distance != b.distance) return a.distance < b.distance;
  if (!simhash_a && a.similarity != b.similarity) return a.similarity > b.similarity;
  return a_at < b_at;
}

}  // namespace

std::string encode_shard_answer(const ShardAnswer& answer) {
  using namespace coding;
  const Verdict& v = answer.verdict;
  std::string out;
  out.reserve(64 + answer.source_topic.size() + v.matched.size() + v.reason.size() +
              v.detail.size() + answer.fingerprinted.size());
  out.append(kAnswerMagic);
  out.push_back(static_cast<char>(kShardAnswerVersion));
  put_fixed32(out, answer.shard);
  put_fixed32(out, answer.shards);
  put_length_prefixed(out, answer.source_topic);
  put_fixed32(out, static_cast<std::uint32_t>(answer.source_partition));
  put_fixed64(out, static_cast<std::uint64_t>(answer.source_offset));
  out.push_back(static_cast<char>(v.status));
  put_length_prefixed(out, v.matched);
  out.push_back(static_cast<char>(static_cast<std::uint8_t>(v.distance)));
  out.push_back(static_cast<char>(v.method));
  put_fixed64(out, std::bit_cast<std::uint64_t>(v.similarity));
  out.push_back(static_cast<char>(v.replayed ? 1 : 0));
  put_length_prefixed(out, v.reason);
  put_length_prefixed(out, v.detail);
  put_length_prefixed(out, answer.fingerprinted);
  return out;
}

std::expected<ShardAnswer, std::string> decode_shard_answer(std::string_view bytes) {
  coding::ByteReader in(bytes);
  if (in.bytes(kAnswerMagic.size()) != kAnswerMagic) {
    return std::unexpected("not a shard's answer (no NDSA magic)");
  }
  const std::uint8_t version = in.u8();
  if (version != kShardAnswerVersion) {
    return std::unexpected("shard answer version " + std::to_string(version) +
                           ", this reader knows " + std::to_string(kShardAnswerVersion));
  }
  ShardAnswer answer;
  answer.shard = in.u32();
  answer.shards = in.u32();
  answer.source_topic = in.length_prefixed();
  answer.source_partition = static_cast<std::int32_t>(in.u32());
  answer.source_offset = static_cast<std::int64_t>(in.u64());
  Verdict& v = answer.verdict;
  const std::uint8_t status = in.u8();
  v.matched = in.length_prefixed();
  v.distance = in.u8();
  v.method = in.u8();
  v.similarity = std::bit_cast<double>(in.u64());
  v.replayed = in.u8() != 0;
  v.reason = in.length_prefixed();
  v.detail = in.length_prefixed();
  answer.fingerprinted = in.length_prefixed();
  if (!in.done()) return std::unexpected("truncated shard answer");
  if (status > static_cast<std::uint8_t>(Verdict::Status::kDeadLetter)) {
    return std::unexpected("shard answer with status " + std::to_string(status));
  }
  v.status = static_cast<Verdict::Status>(status);
  if (answer.shards == 0 || answer.shard >= answer.shards) {
    return std::unexpected("shard answer from shard " + std::to_string(answer.shard) + " of " +
                           std::to_string(answer.shards));
  }
  if (v.method > Verdict::kBoth) {
    return std::unexpected("shard answer with method " + std::to_string(v.method));
  }
  return answer;
}

bool is_decision(const Verdict& verdict) { return is_page_verdict(verdict) && !verdict.replayed; }

std::optional<Decided> Decisions::find(const std::string& id) const {
  auto it = decided_.find(id);
  if (it == decided_.end()) return std::nullopt;
  return it->second;
}

void Decisions::record(const std::string& id, const Verdict& verdict,
                       const SourcePosition& source) {
  if (!is_decision(verdict)) return;
  Decided& decided = decided_[id];
  decided.verdict = verdict;
  decided.source = source;
}

void Decisions::forget(const std::string& id, const SourcePosition& source) {
  if (auto it = decided_.find(id); it != decided_.end() && it->second.source == source) {
    decided_.erase(it);
  }
}

namespace {

constexpr std::string_view kDecidedMagic = "NDDC", kMarkMagic = "NDMK";
constexpr std::uint8_t kDocumentsVersion = 1;
const std::string kMarkPrefix("\0mark\0", 6);

}  // namespace

std::pair<std::string, std::string> encode_decided(const std::string& id,
                                                   const SourcePosition& source,
                                                   const Verdict& verdict) {
  using namespace coding;
  std::string out;
  out.append(kDecidedMagic);
  out.push_back(static_cast<char>(kDocumentsVersion));
  put_length_prefixed(out, source.topic);
  put_fixed32(out, static_cast<std::uint32_t>(source.partition));
  put_fixed64(out, static_cast<std::uint64_t>(source.offset));
  out.push_back(static_cast<char>(verdict.status));
  put_length_prefixed(out, verdict.matched);
  put_length_prefixed(out, verdict.duplicate_of);
  out.push_back(static_cast<char>(static_cast<std::uint8_t>(verdict.distance)));
  out.push_back(static_cast<char>(verdict.method));
  put_fixed64(out, std::bit_cast<std::uint64_t>(verdict.similarity));
  return {id, std::move(out)};
}

std::pair<std::string, std::string> encode_mark(const SourcePosition& source) {
  std::string out;
  out.append(kMarkMagic);
  out.push_back(static_cast<char>(kDocumentsVersion));
  coding::put_fixed64(out, static_cast<std::uint64_t>(source.offset));
  return {kMarkPrefix + source.topic + "/" + std::to_string(source.partition), std::move(out)};
}

std::expected<DocumentsRecord, std::string> decode_documents_record(std::string_view key,
                                                                    std::string_view value) {
  coding::ByteReader in(value);
  const std::string_view magic = in.bytes(4);
  if (magic != kDecidedMagic && magic != kMarkMagic) {
    return std::unexpected("not a documents record (no NDDC or NDMK magic)");
  }
  if (const std::uint8_t version = in.u8(); version != kDocumentsVersion) {
    return std::unexpected("documents record version " + std::to_string(version) +
                           ", this reader knows " + std::to_string(kDocumentsVersion));
  }
  DocumentsRecord record;
  if (magic == kMarkMagic) {
    record.mark = true;
    const std::size_t slash = key.rfind('/');
    if (!key.starts_with(kMarkPrefix) || slash == std::string_view::npos || slash < 6) {
      return std::unexpected("a mark with a bad key");
    }
    record.source.topic = key.substr(6, slash - 6);
    record.source.partition = std::atoi(std::string(key.substr(slash + 1)).c_str());
    record.source.offset = static_cast<std::int64_t>(in.u64());
  } else {
    record.id = key;
    record.source.topic = in.length_prefixed();
    record.source.partition = static_cast<std::int32_t>(in.u32());
    record.source.offset = static_cast<std::int64_t>(in.u64());
    Verdict& v = record.verdict;
    const std::uint8_t status = in.u8();
    v.matched = in.length_prefixed();
    v.duplicate_of = in.length_prefixed();
    v.distance = in.u8();
    v.method = in.u8();
    v.similarity = std::bit_cast<double>(in.u64());
    if (status > static_cast<std::uint8_t>(Verdict::Status::kDuplicate)) {
      return std::unexpected("a decided page with status " + std::to_string(status));
    }
    v.status = static_cast<Verdict::Status>(status);
  }
  if (!in.done()) return std::unexpected("truncated documents record");
  return record;
}

Verdict merge_answers(const std::string& id, std::span<const ShardAnswer> answers,
                      const DecidedPages& decisions) {
  if (answers.empty()) return Verdict{};
  // Skipped and dead-lettered records: every shard passed on what the record said (or what the
  // store refused), alike.
  for (const ShardAnswer& answer : answers) {
    if (!is_page_verdict(answer.verdict)) return answer.verdict;
  }
  bool replayed = true;
  for (const ShardAnswer& answer : answers) replayed = replayed && answer.verdict.replayed;
  if (replayed) {
    if (const std::optional<Decided> decided = decisions.find(id)) {
      Verdict verdict = decided->verdict;
      verdict.replayed = true;
      return verdict;
    }
  }
  const Verdict* best = nullptr;
  std::optional<Decided> best_decided;
  std::uint8_t method = Verdict::kNone;
  for (const ShardAnswer& answer : answers) {
    const Verdict& v = answer.verdict;
    if (v.status != Verdict::Status::kDuplicate) continue;
    std::optional<Decided> decided = decisions.find(v.matched);
    if (!decided) continue;  // not decided here yet
    method |= v.method;
    if (best == nullptr || goes_before(v, decided->source, *best, best_decided->source)) {
      best = &v;
      best_decided = std::move(decided);
    }
  }
  Verdict verdict;
  if (best == nullptr) return verdict;
  verdict.status = Verdict::Status::kDuplicate;
  verdict.method = method;
  verdict.matched = best->matched;
  verdict.distance = best->distance;
  verdict.similarity = best->similarity;
  verdict.duplicate_of = root_of(best->matched, *best_decided);
  return verdict;
}

}  // namespace neardup
