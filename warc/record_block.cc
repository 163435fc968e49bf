#include "warc/record_block.h"

#include <brotli/decode.h>
#include <openssl/evp.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>

#include "common/ascii.h"
#include "warc/header_fields.h"

namespace neardup::warc {
namespace {

// RFC 4648 base32 (upper case, no padding needed for 20 bytes), as WARC writes SHA-1 digests.
std::string base32(const unsigned char* bytes, std::size_t size) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  std::string out;
  std::uint32_t bits = 0;
  int count = 0;
  for (std::size_t i = 0; i < size; ++i) {
    bits = (bits << 8) | bytes[i];
    for (count += 8; count >= 5; count -= 5) out += kAlphabet[(bits >> (count - 5)) & 31];
  }
  if (count > 0) out += kAlphabet[(bits << (5 - count)) & 31];
  return out;
}


enum class Progress { kMore, kDone, kFailed };

// Runs a streaming decoder into `out`: step(next_out, avail_out) writes up to avail_out bytes at
// next_out, lowers avail_out by what it wrote and says whether more output is coming. True when
// the decoder finished; false when it failed, or when the output passed kMaxBlockBytes
// (`too_large` is then set).
template <typename Step>
bool decode_stream(std::string& out, bool& too_large, Step step) {
  out.clear();
  for (;;) {
    if (out.size() >= kMaxBlockBytes) {
      too_large = true;
      return false;
    }
    const std::size_t old = out.size();
    out.resize(old + kDecodeChunk);
    std::size_t avail_out = kDecodeChunk;
    const Progress progress = step(out.data() + old, avail_out);
    out.resize(old + kDecodeChunk - avail_out);
    if (progress != Progress::kMore) return progress == Progress::kDone;
  }
}

// Inflates a whole zlib, gzip (window_bits 15 + 32: either) or raw deflate (-15) stream.
bool inflate_all(std::string_view in, int window_bits, std::string& out, bool& too_large) {
  z_stream zs{};
  if (::inflateInit2(&zs, window_bits) != Z_OK) return false;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  const bool done = decode_stream(out, too_large, [&](char* next_out, std::size_t& avail_out) {
    zs.next_out = reinterpret_cast<Bytef*>(next_out);
    zs.avail_out = static_cast<uInt>(avail_out);
    const int rc = ::inflate(&zs, Z_NO_FLUSH);  // Z_BUF_ERROR: the stream is cut short
    avail_out = zs.avail_out;
    return rc == Z_OK ? Progress::kMore : rc == Z_STREAM_END ? Progress::kDone : Progress::kFailed;
  });
  ::inflateEnd(&zs);
  return done;
}

bool brotli_all(std::string_view in, std::string& out, bool& too_large) {
  BrotliDecoderState* state = BrotliDecoderCreateInstance(nullptr, nullptr, nullptr);
  if (!state) return false;
  std::size_t avail_in = in.size();
  const auto* next_in = reinterpret_cast<const std::uint8_t*>(in.data());
  const bool done = decode_stream(out, too_large, [&](char* next_out, std::size_t& avail_out) {
    auto* out_bytes = reinterpret_cast<std::uint8_t*>(next_out);
    const BrotliDecoderResult rc =
        BrotliDecoderDecompressStream(state, &avail_in, &next_in, &avail_out, &out_bytes, nullptr);
    return rc == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT ? Progress::kMore
           : rc == BROTLI_DECODER_RESULT_SUCCESS         ? Progress::kDone
                                                         : Progress::kFailed;
  });
  BrotliDecoderDestroyInstance(state);
  return done;
}

// Undoes chunked transfer coding (RFC 9112 §7.1); trailer fields are dropped. False when `in`
// is not chunked data (some crawlers store the body de-chunked and keep the header).
bool dechunk(std::string_view in, std::string& out) {
  out.clear();
  std::size_t pos = 0;
  for (;;) {
    const std::size_t eol = in.find('\n', pos);
    if (eol == std::string_view::npos) return false;
    std::string_view size_text = trim(in.substr(pos, eol - pos));
    size_text = trim(size_text.substr(0, size_text.find(';')));  // chunk extensions
    std::uint64_t size = 0;
    auto [end, ec] =
        std::from_chars(size_text.data(), size_text.data() + size_text.size(), size, 16);
    if (size_text.empty() || ec != std::errc() || end != size_text.data() + size_text.size()) {
      return false;
    }
    pos = eol + 1;
    if (size == 0) return true;
    if (size > in.size() - pos) return false;
    out.append(in.substr(pos, size));
    pos += size;
    if (in.substr(pos, 2) == "\r\n") {
      pos += 2;
    } else if (in.substr(pos, 1) == "\n") {
      pos += 1;
    } else {
      return false;
    }
  }
}

// Undoes one Content-Encoding. Returns a skip reason when it cannot.
std::optional<std::string> decode_content(std::string_view coding, std::string& body) {
  std::string decoded;
  bool too_large = false;
  bool ok = false;
  if (coding.empty() || coding == "identity") return std::nullopt;
  if (coding == "gzip" || coding == "x-gzip") {
    ok = inflate_all(body, 15 + 32, decoded, too_large);
  } else if (coding == "deflate") {  // zlib-wrapped as specified, or raw as some servers send
    ok = inflate_all(body, 15, decoded, too_large) || inflate_all(body, -15, decoded, too_large);
  } else if (coding == "br") {
    ok = brotli_all(body, decoded, too_large);
  } else {
    return "unsupported_encoding";
  }
  if (too_large) return "too_large";
  if (!ok) return "bad_encoding";
  body = std::move(decoded);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> block_digest_mismatch(std::string_view digest, std::string_view block) {
  if (digest.size() < 5 || !ascii_iequals(digest.substr(0, 5), "sha1:")) return std::nullopt;
  const std::string_view want = digest.substr(5);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int md_size = 0;
  if (EVP_Digest(block.data(), block.size(), md, &md_size, EVP_sha1(), nullptr) != 1) {
    return std::nullopt;
  }
  std::string got = base32(md, md_size);
  if (want.size() == 40) {  // hex
    static constexpr char kHex[] = "0123456789abcdef";
    got.clear();
    for (unsigned int i = 0; i < md_size; ++i) (got += kHex[md[i] >> 4]) += kHex[md[i] & 15];
  }
  if (ascii_iequals(want, got)) return std::nullopt;
  return "WARC-Block-Digest " + std::string(digest) + " does not match the block (sha1:" + got +
         "): a damaged byte";
}

std::optional<std::string> read_http_response(std::string_view block, WarcPage& page) {
  if (!block.starts_with("HTTP/")) return "not_http";
  const std::size_t eol = block.find('\n');
  if (eol == std::string_view::npos) return "bad_http";
  // "HTTP/1.1 200 OK": the three digits after the first space.
  const std::string_view status_line = block.substr(0, eol);
  const std::size_t space = status_line.find(' ');
  const std::string_view code = space == std::string_view::npos
                                    ? std::string_view()
                                    : trim(status_line.substr(space + 1)).substr(0, 3);
  if (code.size() != 3 ||
      !std::all_of(code.begin(), code.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return "bad_http";
  }
  Headers headers;
  bool too_large = false;
  const std::optional<std::size_t> body_at = read_headers(block, eol + 1, headers, too_large);
  if (!body_at) return too_large ? "headers_too_large" : "bad_http";
  if (code != "200") return "status_" + std::string(code);

  page.content_type = std::string(headers.get("Content-Type"));
  const std::string media =
      ascii_lowercase(trim(std::string_view(page.content_type)
                     .substr(0, std::string_view(page.content_type).find(';'))));
  if (!media.empty() && media != "text/html" && media != "application/xhtml+xml") {
    return "not_html";
  }
  page.body.assign(block.substr(*body_at));
  if (ascii_lowercase(headers.get("Transfer-Encoding")).find("chunked") != std::string::npos) {
    std::string plain;
    if (dechunk(page.body, plain)) page.body = std::move(plain);
  }
  // Codings are listed in the order they were applied: undo them from the last.
  std::string_view codings = headers.get("Content-Encoding");
  while (!codings.empty()) {
    const std::size_t comma = codings.rfind(',');
    const std::string coding =
        ascii_lowercase(trim(comma == std::string_view::npos ? codings : codings.substr(comma + 1)));
    codings = comma == std::string_view::npos ? std::string_view() : codings.substr(0, comma);
    if (auto skip = decode_content(coding, page.body)) return skip;
  }
  if (page.body.size() > kMaxBlockBytes) return "too_large";
  return std::nullopt;
}

}  // namespace neardup::warc
