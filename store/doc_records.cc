#include "store/doc_records.h"

#include "common/coding.h"

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

}  // namespace neardup::records
