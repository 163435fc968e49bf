#include "pipeline/decode/char_tables.h"

#include <unicode/ucnv_cb.h>
#include <unicode/utf16.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace neardup::decode_internal {
namespace {

constexpr unsigned kLeadFirst = 0x81;
constexpr unsigned kLeadLast = 0xFE;
constexpr unsigned kTrailFirst = 0x40;
constexpr unsigned kTrailLast = 0xFE;
constexpr std::size_t kTrails = kTrailLast - kTrailFirst + 1;

void write_replacement(const void*, UConverterToUnicodeArgs* args, const char*, int32_t,
                       UConverterCallbackReason reason, UErrorCode* status) {
  if (reason > UCNV_IRREGULAR) return;
  *status = U_ZERO_ERROR;
  static constexpr UChar kReplacement = 0xFFFD;
  ucnv_cbToUWriteUChars(args, &kReplacement, 1, 0, status);
}

// Decodes `units` (each `width` bytes, then a '\n', which is no part of a multi-byte character
// in these charsets, so that every unit starts where a character starts) in one call. Returns
// the code point of each unit ICU reads as exactly one character without error, else kNone.
constexpr char32_t kNone = 0xFFFFFFFF;
std::vector<char32_t> decode_units(UConverter* converter, const std::string& units,
                                   std::size_t width) {
  const std::size_t stride = width + 1;
  std::vector<char32_t> code_points(units.size() / stride, kNone);
  std::vector<std::uint8_t> characters(code_points.size(), 0);
  std::vector<UChar> out(units.size() * 2 + 16);
  std::vector<int32_t> offsets(out.size(), -1);
  ucnv_resetToUnicode(converter);
  UErrorCode status = U_ZERO_ERROR;
  ucnv_setToUCallBack(converter, write_replacement, nullptr, nullptr, nullptr, &status);
  const char* source = units.data();
  UChar* target = out.data();
  ucnv_toUnicode(converter, &target, out.data() + out.size(), &source, units.data() + units.size(),
                 offsets.data(), /*flush=*/true, &status);
  UErrorCode reset_status = U_ZERO_ERROR;
  ucnv_setToUCallBack(converter, UCNV_TO_U_CALLBACK_SUBSTITUTE, nullptr, nullptr, nullptr,
                      &reset_status);
  ucnv_resetToUnicode(converter);
  if (U_FAILURE(status)) return std::vector<char32_t>(code_points.size(), kNone);
  const auto written = static_cast<int32_t>(target - out.data());
  for (int32_t i = 0; i < written;) {
    const int32_t offset = offsets[static_cast<std::size_t>(i)];
    UChar32 c;
    U16_NEXT(out.data(), i, written, c);
    if (offset < 0) return std::vector<char32_t>(code_points.size(), kNone);
    const std::size_t unit = static_cast<std::size_t>(offset) / stride;
    const std::size_t at = static_cast<std::size_t>(offset) % stride;
    if (at == width && c == '\n') continue;
    if (at == 0 && c != 0xFFFD) code_points[unit] = static_cast<char32_t>(c);
    characters[unit] = at == 0 && c != 0xFFFD && characters[unit] == 0 ? 1 : 2;
  }
  for (std::size_t unit = 0; unit < code_points.size(); ++unit) {
    if (characters[unit] != 1) code_points[unit] = kNone;
  }
  return code_points;
}

// c's UTF-8, packed; 0 for kNone and for characters beyond the BMP.
PackedUtf8 pack_utf8(char32_t c) {
  if (c == kNone || c >= 0x10000) return 0;
  std::uint32_t bytes;
  std::uint32_t length;
  if (c < 0x80) {
    bytes = c;
    length = 1;
  } else if (c < 0x800) {
    bytes = (0xC0 | (c >> 6)) | (0x80 | (c & 0x3F)) << 8;
    length = 2;
  } else {
    bytes = (0xE0 | (c >> 12)) | (0x80 | ((c >> 6) & 0x3F)) << 8 | (0x80 | (c & 0x3F)) << 16;
    length = 3;
  }
  return bytes | length << 24;
}

}  // namespace

CharTables read_char_tables(UConverter* converter) {
  CharTables tables;
  const UConverterType type = ucnv_getType(converter);
  if (type != UCNV_SBCS && type != UCNV_MBCS && type != UCNV_LATIN_1 && type != UCNV_US_ASCII) {
    return tables;
  }
  std::string units;
  for (unsigned c = 0; c < 0x100; ++c) units += {static_cast<char>(c), '\n'};
  const std::vector<char32_t> bytes = decode_units(converter, units, 1);
  if (bytes[0] != 0) return tables;  // NUL is not U+0000
  tables.ascii_is_itself = true;
  for (char32_t c = 1; c < 0x80; ++c) {
    if (bytes[c] == kNone) return tables;  // an ASCII byte that is not a character alone
    if (bytes[c] != c) tables.ascii_is_itself = false;
  }
  for (std::size_t b = 0; b < bytes.size(); ++b) tables.singles[b] = pack_utf8(bytes[b]);
  if (ucnv_getMaxCharSize(converter) > 1) {
    units.clear();
    for (unsigned lead = kLeadFirst; lead <= kLeadLast; ++lead) {
      for (unsigned trail = kTrailFirst; trail <= kTrailLast; ++trail) {
        units += {static_cast<char>(lead), static_cast<char>(trail), '\n'};
      }
    }
    const std::vector<char32_t> pairs = decode_units(converter, units, 2);
    tables.pairs.resize(pairs.size());
    for (std::size_t i = 0; i < pairs.size(); ++i) tables.pairs[i] = pack_utf8(pairs[i]);
  }
  tables.usable = true;
  return tables;
}

TableDecoded decode_by_tables(std::string_view bytes, std::size_t pos, const CharTables& tables,
                              char* out) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::size_t n = bytes.size();
  char* o = out;
  while (pos < n) {
    const unsigned char b = s[pos];
    if (b < 0x80 && tables.ascii_is_itself) {  // ASCII: eight bytes a step while they all are
      std::uint64_t word;
      while (pos + 8 <= n &&
             (std::memcpy(&word, s + pos, 8), (word & 0x8080808080808080ull) == 0)) {
        std::memcpy(o, &word, 8);
        o += 8;
        pos += 8;
      }
      while (pos < n && s[pos] < 0x80) *o++ = static_cast<char>(s[pos++]);
      continue;
    }
    PackedUtf8 c = tables.singles[b];
    std::size_t length = 1;
    if (c == 0) {
      if (tables.pairs.empty() || pos + 1 >= n || b < kLeadFirst || b > kLeadLast ||
          s[pos + 1] < kTrailFirst || s[pos + 1] > kTrailLast) {
        break;
      }
      c = tables.pairs[(b - kLeadFirst) * kTrails + (s[pos + 1] - kTrailFirst)];
      if (c == 0) break;
      length = 2;
    }
    std::memcpy(o, &c, 4);  // the character's bytes, and one or more bytes overwritten next
    o += c >> 24;
    pos += length;
  }
  return {pos, static_cast<std::size_t>(o - out)};
}

}  // namespace neardup::decode_internal
