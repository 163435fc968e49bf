// Fixed-width integers as bytes in an explicit byte order, in the manner of LevelDB's
// util/coding.h. Everything the store writes goes through these: little-endian ("fixed")
// values, and big-endian keys where LMDB's byte order must sort them numerically. Decoding
// reads through a ByteReader, which fails instead of reading past the end.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace neardup::coding {

inline void encode_fixed16(char* dst, std::uint16_t v) {
  dst[0] = static_cast<char>(v & 0xff);
  dst[1] = static_cast<char>(v >> 8);
}
inline void encode_fixed32(char* dst, std::uint32_t v) {
  for (int i = 0; i < 4; ++i, v >>= 8) dst[i] = static_cast<char>(v & 0xff);
}
inline void encode_fixed64(char* dst, std::uint64_t v) {
  for (int i = 0; i < 8; ++i, v >>= 8) dst[i] = static_cast<char>(v & 0xff);
}
inline void encode_be64(char* dst, std::uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) dst[i] = static_cast<char>(v & 0xff);
}

inline std::uint16_t decode_fixed16(const char* src) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(src[0]) |
                                    static_cast<unsigned char>(src[1]) << 8);
}
inline std::uint32_t decode_fixed32(const char* src) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(src[i]);
  return v;
}
inline std::uint64_t decode_fixed64(const char* src) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(src[i]);
  return v;
}
inline std::uint64_t decode_be64(const char* src) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(src[i]);
  return v;
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
