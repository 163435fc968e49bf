#include "store/verdict_records.h"

#include <algorithm>
#include <cmath>

#include "common/coding.h"

namespace neardup::records {

using coding::ByteReader;
using coding::put_fixed16;
using coding::put_fixed64;

std::uint16_t quantize_similarity(double similarity) {
  if (similarity < 0) return DocRecord::kNoSimilarity;
  return static_cast<std::uint16_t>(std::lround(std::min(similarity, 1.0) * 10000));
}

double similarity_value(std::uint16_t stored) {
  return stored == DocRecord::kNoSimilarity ? -1 : stored / 10000.0;
}

// A verdict's containment and paragraph fields: section 1 of its stored form.
static void encode_relations(const Verdict& v, std::string& out) {
  out.push_back(1);
  for (const Verdict::Related* r : {&v.contained_in, &v.contains}) {
    coding::put_length_prefixed(out, r->id);
    put_fixed16(out, quantize_similarity(r->share));
  }
  put_fixed16(out, static_cast<std::uint16_t>(std::min<std::uint32_t>(v.paragraphs, 0xffff)));
  put_fixed16(out, static_cast<std::uint16_t>(std::min<std::uint32_t>(v.paragraphs_seen, 0xffff)));
  const std::size_t n = std::min<std::size_t>(v.paragraphs_from.size(), 255);
  out.push_back(static_cast<char>(n));
  for (std::size_t i = 0; i < n; ++i) coding::put_length_prefixed(out, v.paragraphs_from[i]);
  const std::size_t seen = std::min<std::size_t>(v.paragraphs_seen_at.size(), 0xffff);
  put_fixed16(out, static_cast<std::uint16_t>(seen));
  for (std::size_t i = 0; i < seen; ++i) put_fixed16(out, v.paragraphs_seen_at[i]);
}

std::string encode_verdict(const Verdict& v, std::uint64_t digest) {
  std::string out;
  out.push_back(static_cast<char>(v.status));
  out.push_back(static_cast<char>(std::clamp(v.distance, 0, 255)));
  out.push_back(static_cast<char>(v.method));
  put_fixed16(out, quantize_similarity(v.similarity));
  for (const std::string* s : {&v.matched, &v.duplicate_of, &v.reason}) {
    coding::put_length_prefixed(out, *s);
  }
  put_fixed64(out, digest);
  if (!v.contained_in.id.empty() || !v.contains.id.empty() || v.paragraphs > 0) {
    encode_relations(v, out);
  }
  if (v.fingerprint) {
    out.push_back(2);
    put_fixed64(out, *v.fingerprint);
    coding::put_varint64(out, v.boilerplate_lines.size());
    for (std::uint32_t line : v.boilerplate_lines) coding::put_varint64(out, line);
  }
  return out;
}

std::optional<Verdict> decode_verdict(std::string_view bytes, std::uint64_t* digest) {
  ByteReader in(bytes);
  Verdict v;
  const std::uint8_t status = in.u8();
  v.distance = in.u8();
  v.method = in.u8();
  v.similarity = similarity_value(in.u16());
  for (std::string* s : {&v.matched, &v.duplicate_of, &v.reason}) {
    *s = std::string(in.length_prefixed());
  }
  const std::uint64_t stored_digest = in.ok() && !in.done() ? in.u64() : 0;
  if (digest != nullptr) *digest = stored_digest;
  std::uint8_t section = in.ok() && !in.done() ? in.u8() : 0;
  if (section == 1) {
    for (Verdict::Related* r : {&v.contained_in, &v.contains}) {
      r->id = std::string(in.length_prefixed());
      r->share = similarity_value(in.u16());
    }
    v.paragraphs = in.u16();
    v.paragraphs_seen = in.u16();
    for (std::uint8_t n = in.u8(); n > 0 && in.ok(); --n) {
      v.paragraphs_from.emplace_back(in.length_prefixed());
    }
    for (std::uint16_t n = in.u16(); n > 0 && in.ok(); --n)
      v.paragraphs_seen_at.push_back(in.u16());
    section = in.ok() && !in.done() ? in.u8() : 0;
  }
  if (section == 2) {
    v.fingerprint = in.u64();
    const std::uint64_t lines = in.varint64();
    for (std::uint64_t i = 0; i < lines && in.ok(); ++i) {
      const std::uint64_t line = in.varint64();
      if (line > UINT32_MAX) return std::nullopt;
      v.boilerplate_lines.push_back(static_cast<std::uint32_t>(line));
    }
  } else if (section != 0) {
    return std::nullopt;
  }
  if (!in.done() || status > static_cast<std::uint8_t>(Verdict::Status::kDeadLetter) ||
      v.method > Verdict::kBoth) {
    return std::nullopt;
  }
  v.status = static_cast<Verdict::Status>(status);
  return v;
}

std::string encode_keys(const std::vector<std::uint64_t>& keys) {
  std::string out;
  out.reserve(8 * keys.size());
  for (std::uint64_t key : keys) put_fixed64(out, key);
  return out;
}

std::optional<std::vector<std::uint64_t>> decode_keys(std::string_view bytes) {
  if (bytes.size() % 8 != 0) return std::nullopt;
  ByteReader in(bytes);
  std::vector<std::uint64_t> keys(bytes.size() / 8);
  for (std::uint64_t& key : keys) key = in.u64();
  return keys;
}

std::string Relations::encode() const {
  std::string out;
  put_fixed64(out, contained_in);
  put_fixed16(out, contained_share);
  put_fixed64(out, contains);
  put_fixed16(out, contains_share);
  put_fixed16(out, paragraphs);
  put_fixed16(out, paragraphs_seen);
  const std::size_t n = std::min<std::size_t>(paragraphs_from.size(), 255);
  out.push_back(static_cast<char>(n));
  for (std::size_t i = 0; i < n; ++i) put_fixed64(out, paragraphs_from[i]);
  return out;
}

std::optional<Relations> Relations::decode(std::string_view bytes) {
  ByteReader in(bytes);
  Relations r;
  r.contained_in = in.u64();
  r.contained_share = in.u16();
  r.contains = in.u64();
  r.contains_share = in.u16();
  r.paragraphs = in.u16();
  r.paragraphs_seen = in.u16();
  for (std::uint8_t n = in.u8(); n > 0 && in.ok(); --n) r.paragraphs_from.push_back(in.u64());
  if (!in.ok() || !in.done()) return std::nullopt;
  return r;
}

std::string pending_prefix(std::string_view partition) {
  std::string key(1, static_cast<char>(std::min<std::size_t>(partition.size(), 255)));
  return key += partition;
}

std::string pending_key(std::string_view partition, std::int64_t offset) {
  return pending_prefix(partition) +
         coding::be64_key(static_cast<std::uint64_t>(offset) ^ (1ull << 63));
}

void append_pending_entry(std::string& record, std::int64_t offset, std::string_view verdict) {
  put_fixed64(record, static_cast<std::uint64_t>(offset));
  coding::put_length_prefixed(record, verdict);
}

}  // namespace neardup::records
