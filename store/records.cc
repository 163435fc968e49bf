#include "store/records.h"

#include "common/coding.h"
#include "common/sketch.h"

namespace neardup::records {

using coding::ByteReader;
using coding::put_fixed32;
using coding::put_fixed64;

namespace {

// out[i] = the byte of sketch value i from bit `shift` on (0: its low byte, 8: its high byte).
// Through plain pointers, so that the loop is vectorized (stores through a std::string's
// operator[] may alias the vector's own pointers and are made one value at a time).
void narrow_values(const std::vector<std::uint16_t>& sketch, unsigned shift, char* out) {
  const std::uint16_t* in = sketch.data();
  const std::size_t n = sketch.size();
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>(in[i] >> shift);
}

}  // namespace

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
  if (wide_bands) put_fixed32(out, 1);
  return out;
}

std::optional<SchemeState> SchemeState::decode(std::string_view bytes) {
  ByteReader in(bytes);
  SchemeState s{in.u32(), in.u32(), in.u32(), in.u32()};
  if (!in.done()) {
    if (in.u32() != 1) return std::nullopt;
    s.wide_bands = true;
  }
  if (!in.done() || std::uint64_t{s.bands} * s.rows > s.hashes) return std::nullopt;
  if (s.wide_bands && !s.has_minhash()) return std::nullopt;
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

std::string encode_sketch_high(const std::vector<std::uint16_t>& sketch,
                               std::span<const std::uint16_t> upper) {
  std::string out(sketch.size(), '\0');
  narrow_values(sketch, 8, out.data());
  for (std::uint16_t v : upper) coding::put_fixed16(out, v);
  return out;
}

std::optional<std::vector<std::uint16_t>> join_sketch(const std::vector<std::uint16_t>& low,
                                                      std::string_view high,
                                                      std::vector<std::uint16_t>* upper) {
  const std::size_t n = low.size();
  if (high.size() < n || (high.size() - n) % 2 != 0 || high.size() - n > 2 * n) return std::nullopt;
  if (upper != nullptr) {
    upper->clear();
    ByteReader in(high.substr(n));
    while (upper->size() < (high.size() - n) / 2) upper->push_back(in.u16());
  }
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
