// Fixed-width integers as bytes in an explicit byte order, in the manner of LevelDB's
// util/coding.h. Everything the store writes goes through these: little-endian ("fixed")
// values, and big-endian keys where LMDB's byte order must sort them numerically. Decoding
// reads through a ByteReader, which fails instead of reading past the end.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace neardup::coding {

// Stored bytes are little-endian ("fixed") or big-endian ("be"); on a host of the other order
// the value is byte-swapped. memcpy compiles to one load or store.
template <typename T>
inline T to_little(T v) {
  if constexpr (std::endian::native == std::endian::little) return v;
  return std::byteswap(v);
}
template <typename T>
inline T to_big(T v) {
  if constexpr (std::endian::native == std::endian::big) return v;
  return std::byteswap(v);
}
template <typename T>
inline void store_as(char* dst, T v) {
  std::memcpy(dst, &v, sizeof v);
}
template <typename T>
inline T load_as(const char* src) {
  T v;
  std::memcpy(&v, src, sizeof v);
  return v;
}

inline void encode_fixed16(char* dst, std::uint16_t v) { store_as(dst, to_little(v)); }
inline void encode_fixed32(char* dst, std::uint32_t v) { store_as(dst, to_little(v)); }
inline void encode_fixed64(char* dst, std::uint64_t v) { store_as(dst, to_little(v)); }
inline void encode_be64(char* dst, std::uint64_t v) { store_as(dst, to_big(v)); }

inline std::uint16_t decode_fixed16(const char* src) {
  return to_little(load_as<std::uint16_t>(src));
}
inline std::uint32_t decode_fixed32(const char* src) {
  return to_little(load_as<std::uint32_t>(src));
}
inline std::uint64_t decode_fixed64(const char* src) {
  return to_little(load_as<std::uint64_t>(src));
}
inline std::uint64_t decode_be64(const char* src) { return to_big(load_as<std::uint64_t>(src)); }
// The low 40 bits of a value, in 5 bytes (little-endian).
inline void encode_fixed40(char* dst, std::uint64_t v) {
  encode_fixed32(dst, static_cast<std::uint32_t>(v));
  dst[4] = static_cast<char>(v >> 32);
}
inline std::uint64_t decode_fixed40(const char* src) {
  return std::uint64_t{decode_fixed32(src)} | std::uint64_t{static_cast<unsigned char>(src[4])}
                                                  << 32;
}

inline void put_fixed16(std::string& dst, std::uint16_t v) {
  char buf[2];
  encode_fixed16(buf, v);
  dst.append(buf, 2);
}
inline void put_fixed32(std::string& dst, std::uint32_t v) {
  char buf[4];
  encode_fixed32(buf, v);
  dst.append(buf, 4);
}
inline void put_fixed64(std::string& dst, std::uint64_t v) {
  char buf[8];
  encode_fixed64(buf, v);
  dst.append(buf, 8);
}
// A u32 length, then the bytes.
inline void put_length_prefixed(std::string& dst, std::string_view bytes) {
  put_fixed32(dst, static_cast<std::uint32_t>(bytes.size()));
  dst.append(bytes);
}
// LEB128: 7 bits a byte, least significant first, the high bit set on every byte but the last
// (1 byte below 128, at most 10).
inline void put_varint64(std::string& dst, std::uint64_t v) {
  while (v >= 0x80) {
    dst.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  dst.push_back(static_cast<char>(v));
}
// Signed values near zero in few varint bytes: 0, -1, 1, -2, ... -> 0, 1, 2, 3, ...
inline std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
inline std::int64_t unzigzag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}
// An 8-byte big-endian key (sorts numerically in LMDB's default byte order).
inline std::string be64_key(std::uint64_t v) {
  std::string key(8, '\0');
  encode_be64(key.data(), v);
  return key;
}

// Reads values off the front of a byte string. Every read checks the remaining length: past
// the end it returns zero (or an empty view) and the reader stays !ok() from then on, so a
// decoder reads all fields and checks once.
class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}

  std::uint8_t u8() { return take(1) ? static_cast<std::uint8_t>(in_[at_ - 1]) : 0; }
  std::uint16_t u16() { return take(2) ? decode_fixed16(in_.data() + at_ - 2) : 0; }
  std::uint32_t u32() { return take(4) ? decode_fixed32(in_.data() + at_ - 4) : 0; }
  std::uint64_t u64() { return take(8) ? decode_fixed64(in_.data() + at_ - 8) : 0; }
  std::string_view bytes(std::size_t n) {
    return take(n) ? in_.substr(at_ - n, n) : std::string_view();
  }
  std::string_view length_prefixed() { return bytes(u32()); }
  // A put_varint64 value; more than 10 bytes, or bits past 64, make the reader !ok().
  std::uint64_t varint64() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (!take(1)) return 0;
      const auto byte = static_cast<std::uint8_t>(in_[at_ - 1]);
      if (shift == 63 && byte > 1) break;
      v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return v;
    }
    ok_ = false;
    return 0;
  }
  std::string_view rest() { return bytes(in_.size() - std::min(at_, in_.size())); }

  bool ok() const { return ok_; }
  bool done() const { return ok_ && at_ == in_.size(); }

 private:
  bool take(std::size_t n) {
    if (!ok_ || in_.size() - at_ < n) {
      ok_ = false;
      return false;
    }
    at_ += n;
    return true;
  }
  std::string_view in_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

}  // namespace neardup::coding
