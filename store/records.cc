#include "store/records.h"

#include <algorithm>
#include <cmath>

#include "common/coding.h"
#include "common/sketch.h"

namespace neardup::records {

using coding::ByteReader;
using coding::put_fixed16;
using coding::put_fixed32;
using coding::put_fixed64;

namespace {

// The compact record's first byte: which optional fields follow, and the id's scheme prefix.
constexpr std::uint8_t kPrefixMask = 0x07;  // index into kIdPrefixes; 0: none
constexpr std::uint8_t kDuplicateBit = 0x08;
constexpr std::uint8_t kMatchedBit = 0x10;
constexpr std::uint8_t kDistanceBit = 0x20;
constexpr std::uint8_t kSimilarityBit = 0x40;
constexpr std::uint8_t kAnchorsBit = 0x80;
// The second byte: flags (bits 0-4), method (bits 5-6), and whether a sketch follows.
constexpr std::uint8_t kSketchBit = 0x80;
// Longest first where one extends another; index + 1 is the code.
constexpr std::string_view kIdPrefixes[] = {"https://www.", "http://www.", "https://", "http://"};

// out[i] = the byte of sketch value i from bit `shift` on (0: its low byte, 8: its high byte).
// Through plain pointers, so that the loop is vectorized (stores through a std::string's
// operator[] may alias the vector's own pointers and are made one value at a time).
void narrow_values(const std::vector<std::uint16_t>& sketch, unsigned shift, char* out) {
  const std::uint16_t* in = sketch.data();
  const std::size_t n = sketch.size();
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>(in[i] >> shift);
}

std::uint8_t id_prefix(std::string_view id) {
  for (std::size_t i = 0; i < std::size(kIdPrefixes); ++i) {
    if (id.starts_with(kIdPrefixes[i])) return static_cast<std::uint8_t>(i + 1);
  }
  return 0;
}

// The id without the scheme prefix its form byte names.
std::string_view id_rest(std::string_view id, std::uint8_t prefix) {
  return id.substr(prefix == 0 ? 0 : kIdPrefixes[prefix - 1].size());
}

}  // namespace

std::string DocRecord::encode_compact(std::uint64_t doc, const DocRecord* base) const {
  const std::uint8_t prefix = id_prefix(id);
  std::uint8_t form = prefix;
  if (status != 0) form |= kDuplicateBit;
  if (matched != 0) form |= kMatchedBit;
  if (distance != 0) form |= kDistanceBit;
  if (similarity != kNoSimilarity) form |= kSimilarityBit;
  if (anchors != 0) form |= kAnchorsBit;
  std::string out;
  out.reserve(32 + id.size());
  out.push_back(static_cast<char>(form));
  out.push_back(
      static_cast<char>((flags & 0x1f) | method << 5 | (sketch.empty() ? 0 : kSketchBit)));
  put_fixed64(out, fingerprint);
  coding::put_varint64(out, coding::zigzag(static_cast<std::int64_t>(cluster - doc)));
  if (matched != 0)
    coding::put_varint64(out, coding::zigzag(static_cast<std::int64_t>(doc - matched)));
  if (distance != 0) out.push_back(static_cast<char>(distance));
  if (similarity != kNoSimilarity) put_fixed16(out, similarity);
  // Differences in unsigned arithmetic (wrapping, undone exactly by the decoder).
  const std::uint64_t stored_ms = std::uint64_t{stored_at_s} * 1000;
  coding::put_varint64(out, coding::zigzag(static_cast<std::int64_t>(
                                static_cast<std::uint64_t>(first_seen_ms) - stored_ms)));
  coding::put_varint64(out, scheme);
  if (base == nullptr) {
    put_fixed32(out, stored_at_s);
  } else {
    coding::put_varint64(out, coding::zigzag(std::int64_t{stored_at_s} - base->stored_at_s));
  }
  if (anchors != 0) coding::put_varint64(out, anchors);
  if (!sketch.empty()) {
    coding::put_varint64(out, sketch.size());
    out += sketch;
  }
  const std::string_view rest = id_rest(id, prefix);
  if (base == nullptr) {
    out.append(rest);
  } else {
    const std::string_view base_rest = id_rest(base->id, id_prefix(base->id));
    const std::size_t shared =
        std::mismatch(rest.begin(), rest.end(), base_rest.begin(), base_rest.end()).first -
        rest.begin();
    coding::put_varint64(out, shared);
    out.append(rest.substr(shared));
  }
  return out;
}

std::optional<DocRecord> DocRecord::decode_compact(std::string_view bytes, std::uint64_t doc,
                                                   const DocRecord* base) {
  ByteReader in(bytes);
  DocRecord r;
  const std::uint8_t form = in.u8();
  const std::uint8_t packed = in.u8();
  r.flags = packed & 0x1f;
  r.method = (packed >> 5) & 0x03;
  r.status = (form & kDuplicateBit) != 0 ? 1 : 0;
  r.fingerprint = in.u64();
  r.cluster = doc + static_cast<std::uint64_t>(coding::unzigzag(in.varint64()));
  if ((form & kMatchedBit) != 0) {
    r.matched = doc - static_cast<std::uint64_t>(coding::unzigzag(in.varint64()));
  }
  if ((form & kDistanceBit) != 0) r.distance = in.u8();
  if ((form & kSimilarityBit) != 0) r.similarity = in.u16();
  const std::int64_t first_seen = coding::unzigzag(in.varint64());
  const std::uint64_t scheme = in.varint64();
  if (base == nullptr) {
    r.stored_at_s = in.u32();
  } else {
    const std::int64_t stored_at = base->stored_at_s + coding::unzigzag(in.varint64());
    if (stored_at < 0 || stored_at > UINT32_MAX) return std::nullopt;
    r.stored_at_s = static_cast<std::uint32_t>(stored_at);
  }
  r.first_seen_ms = static_cast<std::int64_t>(static_cast<std::uint64_t>(first_seen) +
                                              std::uint64_t{r.stored_at_s} * 1000);
  const std::uint64_t anchors = (form & kAnchorsBit) != 0 ? in.varint64() : 0;
  if ((packed & kSketchBit) != 0) {
    const std::uint64_t length = in.varint64();
    r.sketch = std::string(in.bytes(length));  // past the end: empty, and the reader fails
    if (r.sketch.empty()) return std::nullopt;
  }
  const std::uint8_t prefix = form & kPrefixMask;
  std::string_view base_rest;
  if (base != nullptr) {
    const std::uint64_t shared = in.varint64();
    base_rest = id_rest(base->id, id_prefix(base->id));
    if (shared > base_rest.size()) return std::nullopt;
    base_rest = base_rest.substr(0, shared);
  }
  std::string_view rest = in.rest();
  if (!in.ok() || prefix > std::size(kIdPrefixes) || r.method > Verdict::kBoth ||
      scheme > UINT32_MAX || anchors > 0xffff || ((form & kMatchedBit) != 0 && r.matched == 0)) {
    return std::nullopt;
  }
  r.scheme = static_cast<std::uint32_t>(scheme);
  r.anchors = static_cast<std::uint16_t>(anchors);
  const std::string_view prefix_bytes = prefix != 0 ? kIdPrefixes[prefix - 1] : "";
  r.id.reserve(prefix_bytes.size() + base_rest.size() + rest.size());  // allocated once
  r.id.append(prefix_bytes).append(base_rest).append(rest);
  return r;
}

std::string DocRecord::encode_wide() const {
  std::string out;
  out.reserve(48 + id.size());
  put_fixed64(out, fingerprint);
  put_fixed64(out, cluster);
  put_fixed64(out, static_cast<std::uint64_t>(first_seen_ms));
  put_fixed64(out, matched);
  put_fixed32(out, scheme);
  out.push_back(static_cast<char>(status));
  out.push_back(static_cast<char>(distance));
  out.push_back(static_cast<char>(flags));
  out.push_back(static_cast<char>(method));
  put_fixed16(out, similarity);
  put_fixed32(out, stored_at_s);
  put_fixed16(out, anchors);
  return out += id;
}

std::optional<DocRecord> DocRecord::decode_wide(std::string_view bytes) {
  ByteReader in(bytes);
  DocRecord r;
  r.fingerprint = in.u64();
  r.cluster = in.u64();
  r.first_seen_ms = static_cast<std::int64_t>(in.u64());
  r.matched = in.u64();
  r.scheme = in.u32();
  r.status = in.u8();
  r.distance = in.u8();
  r.flags = in.u8();
  r.method = in.u8();
  r.similarity = in.u16();
  r.stored_at_s = in.u32();
  r.anchors = in.u16();
  r.id = std::string(in.rest());
  if (!in.ok() || r.status > static_cast<std::uint8_t>(Verdict::Status::kDuplicate) ||
      r.method > Verdict::kBoth) {
    return std::nullopt;
  }
  return r;
}

std::string DocBlock::encode(const std::vector<DocRecord>& records, std::uint64_t first) {
  std::string out;
  coding::put_varint64(out, records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    const std::string record =
        records[i].encode_compact(first + i, i == 0 ? nullptr : &records.front());
    coding::put_varint64(out, record.size());
    out += record;
  }
  return out;
}

std::size_t DocBlock::added_bytes(std::size_t size) {
  std::string length;
  coding::put_varint64(length, size);
  return length.size() + size;
}

std::optional<std::uint64_t> DocBlock::count(std::string_view bytes) {
  ByteReader in(bytes);
  const std::uint64_t n = in.varint64();
  if (!in.ok() || n == 0) return std::nullopt;
  return n;
}

std::optional<std::vector<DocRecord>> DocBlock::decode(std::string_view bytes,
                                                       std::uint64_t first) {
  ByteReader in(bytes);
  const std::uint64_t n = in.varint64();
  if (!in.ok() || n == 0 || n > bytes.size()) return std::nullopt;
  std::vector<DocRecord> records;
  records.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::string_view record = in.bytes(in.varint64());
    if (!in.ok()) return std::nullopt;
    auto decoded =
        DocRecord::decode_compact(record, first + i, i == 0 ? nullptr : &records.front());
    if (!decoded) return std::nullopt;
    records.push_back(std::move(*decoded));
  }
  if (!in.done()) return std::nullopt;
  return records;
}

std::optional<DocRecord> DocBlock::decode_one(std::string_view bytes, std::uint64_t first,
                                              std::uint64_t doc) {
  ByteReader in(bytes);
  const std::uint64_t n = in.varint64();
  if (!in.ok() || doc < first || doc - first >= n) return std::nullopt;
  auto base = DocRecord::decode_compact(in.bytes(in.varint64()), first);
  if (!in.ok() || !base || doc == first) return base;
  for (std::uint64_t i = 1; i < doc - first; ++i) in.bytes(in.varint64());
  const std::string_view record = in.bytes(in.varint64());
  if (!in.ok()) return std::nullopt;
  return DocRecord::decode_compact(record, doc, &*base);
}

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
    for (std::uint16_t n = in.u16(); n > 0 && in.ok(); --n) v.paragraphs_seen_at.push_back(in.u16());
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
  return pending_prefix(partition) + coding::be64_key(static_cast<std::uint64_t>(offset) ^ (1ull << 63));
}

void append_pending_entry(std::string& record, std::int64_t offset, std::string_view verdict) {
  put_fixed64(record, static_cast<std::uint64_t>(offset));
  coding::put_length_prefixed(record, verdict);
}

std::string ColumnState::encode() const {
  std::string out;
  put_fixed64(out, watermark);
  put_fixed32(out, next_run);
  put_fixed32(out, static_cast<std::uint32_t>(runs.size()));
  for (const Run& run : runs) {
    put_fixed32(out, run.id);
    put_fixed64(out, run.entries);
  }
  return out;
}

std::optional<ColumnState> ColumnState::decode(std::string_view bytes) {
  ByteReader in(bytes);
  ColumnState s;
  s.watermark = in.u64();
  s.next_run = in.u32();
  const std::uint32_t count = in.u32();
  if (!in.ok() || count > bytes.size() / 12) return std::nullopt;
  for (std::uint32_t i = 0; i < count; ++i) {
    Run run;
    run.id = in.u32();
    run.entries = in.u64();
    s.runs.push_back(run);
  }
  if (!in.done()) return std::nullopt;
  return s;
}

std::string SchemeState::encode() const {
  std::string out;
  put_fixed32(out, number);
  put_fixed32(out, hashes);
  put_fixed32(out, bands);
  put_fixed32(out, rows);
  return out;
}

std::optional<SchemeState> SchemeState::decode(std::string_view bytes) {
  ByteReader in(bytes);
  SchemeState s{in.u32(), in.u32(), in.u32(), in.u32()};
  if (!in.done() || std::uint64_t{s.bands} * s.rows > s.hashes) return std::nullopt;
  return s;
}

std::string DesignState::encode() const {
  std::string out;
  put_fixed32(out, k);
  put_fixed32(out, r);
  put_fixed32(out, tables);
  if (shards != 1) {
    put_fixed32(out, shard);
    put_fixed32(out, shards);
  }
  return out;
}

std::optional<DesignState> DesignState::decode(std::string_view bytes) {
  ByteReader in(bytes);
  DesignState d{in.u32(), in.u32(), in.u32()};
  if (!in.done()) {
    d.shard = in.u32();
    d.shards = in.u32();
    if (!in.done() || d.shards < 2 || d.shard >= d.shards) return std::nullopt;
  }
  return d;
}

std::string KeyBits::encode() const {
  std::string out;
  put_fixed32(out, tables);
  put_fixed32(out, ids);
  return out;
}

std::optional<KeyBits> KeyBits::decode(std::string_view bytes) {
  ByteReader in(bytes);
  KeyBits bits{in.u32(), in.u32()};
  auto valid = [](std::uint32_t b) { return b >= 40 && b <= 64; };
  if (!in.done() || !valid(bits.tables) || !valid(bits.ids)) return std::nullopt;
  return bits;
}

std::string encode_sketch(const std::vector<std::uint16_t>& sketch) {
  static_assert(kSketchBits == 8, "a byte per stored value");
  std::string out(sketch.size(), '\0');
  narrow_values(sketch, 0, out.data());
  return out;
}

std::optional<std::vector<std::uint16_t>> decode_sketch(std::string_view bytes,
                                                        std::size_t hashes) {
  std::vector<std::uint16_t> sketch(hashes);
  if (whole_sketch(bytes, hashes)) {
    for (std::size_t i = 0; i < hashes; ++i) {
      sketch[i] = coding::decode_fixed16(bytes.data() + 2 * i);
    }
    return sketch;
  }
  if (bytes.size() != hashes) return std::nullopt;
  for (std::size_t i = 0; i < hashes; ++i) sketch[i] = static_cast<std::uint8_t>(bytes[i]);
  return sketch;
}

std::string sketch_high_key(std::uint32_t scheme, std::uint64_t doc) {
  std::string key(12, '\0');
  coding::encode_be64(key.data(), std::uint64_t{scheme} << 32);  // the top 4 bytes: the scheme
  coding::encode_be64(key.data() + 4, doc);
  return key;
}

std::string encode_sketch_high(const std::vector<std::uint16_t>& sketch) {
  std::string out(sketch.size(), '\0');
  narrow_values(sketch, 8, out.data());
  return out;
}

std::optional<std::vector<std::uint16_t>> join_sketch(const std::vector<std::uint16_t>& low,
                                                      std::string_view high) {
  if (high.size() != low.size()) return std::nullopt;
  std::vector<std::uint16_t> sketch(low.size());
  for (std::size_t i = 0; i < low.size(); ++i) {
    sketch[i] = static_cast<std::uint16_t>((static_cast<std::uint8_t>(high[i]) << 8) |
                                           (low[i] & kSketchMask));
  }
  return sketch;
}

std::string encode_u32(std::uint32_t v) {
  std::string out;
  put_fixed32(out, v);
  return out;
}

std::string encode_u64(std::uint64_t v) {
  std::string out;
  put_fixed64(out, v);
  return out;
}

std::optional<std::uint32_t> decode_u32(std::string_view bytes) {
  ByteReader in(bytes);
  std::uint32_t v = in.u32();
  if (!in.done()) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> decode_u64(std::string_view bytes) {
  ByteReader in(bytes);
  std::uint64_t v = in.u64();
  if (!in.done()) return std::nullopt;
  return v;
}

}  // namespace neardup::records
