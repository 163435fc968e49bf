// For the warc tests: bytes compressed as a gzip member or a raw deflate stream.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>
#include <string_view>

namespace neardup::warc {

// One gzip member (window_bits 31), a zlib stream (15), or a raw deflate stream (-15).
inline std::string deflate_bytes(std::string_view data, int window_bits, int level = 6) {
  z_stream zs{};
  EXPECT_EQ(::deflateInit2(&zs, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(::deflateBound(&zs, data.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = data.size();
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = out.size();
  EXPECT_EQ(::deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  ::deflateEnd(&zs);
  return out;
}

inline std::string gzip(std::string_view data, int level = 6) {
  return deflate_bytes(data, 31, level);
}

}  // namespace neardup::warc
