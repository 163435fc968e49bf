// char_tables: the characters of a stateless legacy charset (windows-125x, KOI8, GBK/GB18030,
// Shift_JIS, EUC-JP, EUC-KR, Big5), read once from its ICU converter, so that text in it
// decodes by table lookup. ICU's own conversion of a double-byte character costs several times
// a lookup, and a CJK page holds thousands of them.
//
// Only what ICU decodes the same way wherever a character starts is in the tables: bytes that
// are one character alone, and pairs (lead 0x81-0xFE, trail 0x40-0xFE) that are one character
// without error. Every ASCII byte must be one character alone (most stand for themselves; IBM's
// Shift_JIS swaps three controls). Everything else (four-byte
// GB18030, three-byte EUC-JP, invalid and unmapped sequences) is left to ICU (convert.h).
#pragma once

#include <unicode/ucnv.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace neardup::decode_internal {

// A character as the tables hold it: its UTF-8 bytes in memory order, their count in the top
// byte (1 to 3: characters beyond the BMP are left to ICU); 0: not in the table.
using PackedUtf8 = std::uint32_t;

struct CharTables {
  bool usable = false;           // stateless, and every ASCII byte is a character alone
  bool ascii_is_itself = false;  // and each stands for itself (then runs of them are copied)
  std::array<PackedUtf8, 256> singles{};  // by byte: the bytes that are a character alone
  std::vector<PackedUtf8> pairs;          // (lead - 0x81) * 191 + (trail - 0x40)
};

// Reads the tables of a converter: about a millisecond and 96 KiB for a double-byte charset,
// once per process for each charset (convert.cc shares them among its threads). Leaves
// the converter's to-Unicode side reset, with ICU's default callback.
CharTables read_char_tables(UConverter* converter);

// Decodes bytes[pos..] into UTF-8 at out while they are in the tables; stops at the end or at
// the first byte that is not (a character ICU must read). Writes at most 3 bytes per input
// byte, and may write up to 3 bytes past what it reports written. Returns the position reached and
// the bytes written.
struct TableDecoded {
  std::size_t pos;
  std::size_t written;
};
TableDecoded decode_by_tables(std::string_view bytes, std::size_t pos, const CharTables& tables,
                              char* out);

}  // namespace neardup::decode_internal
