#include "common/encodings.h"

#include <array>
#include <unordered_map>

#include "common/ascii.h"

namespace neardup {
namespace {

// The WHATWG Encoding Standard's encodings and labels, each with the ICU converter that
// reproduces the browser's decoder (pipeline/decode/charset.h says which and why).
constexpr std::array kEncodings{
    Encoding{"utf-8", "", "", true,
             "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8"},
    Encoding{"ibm866", "ibm-866", "", true, "866 cp866 csibm866 ibm866"},
    Encoding{"iso-8859-2", "iso-8859-2", "latin2", true,
             "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 iso_8859-2:1987 l2 "
             "latin2"},
    Encoding{"iso-8859-3", "iso-8859-3", "", true,
             "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 iso_8859-3:1988 l3 "
             "latin3"},
    Encoding{"iso-8859-4", "iso-8859-4", "baltic", true,
             "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 iso_8859-4:1988 l4 "
             "latin4"},
    Encoding{"iso-8859-5", "iso-8859-5", "", true,
             "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 iso_8859-5 "
             "iso_8859-5:1988"},
    Encoding{"iso-8859-6", "iso-8859-6", "arabic", true,
             "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 iso-8859-6 "
             "iso-8859-6-e iso-8859-6-i iso-ir-127 iso8859-6 iso88596 iso_8859-6 "
             "iso_8859-6:1987"},
    Encoding{"iso-8859-7", "iso-8859-7", "greek", true,
             "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 iso8859-7 "
             "iso88597 iso_8859-7 iso_8859-7:1987 sun_eu_greek"},
    Encoding{"iso-8859-8", "iso-8859-8", "hebrew", true,
             "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 iso8859-8 "
             "iso88598 iso_8859-8 iso_8859-8:1988 visual"},
    Encoding{"iso-8859-8-i", "iso-8859-8", "hebrew", true, "csiso88598i iso-8859-8-i logical"},
    Encoding{"iso-8859-10", "iso-8859-10", "", true,
             "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6"},
    Encoding{"iso-8859-13", "iso-8859-13", "baltic", true, "iso-8859-13 iso8859-13 iso885913"},
    Encoding{"iso-8859-14", "iso-8859-14", "", true, "iso-8859-14 iso8859-14 iso885914"},
    Encoding{"iso-8859-15", "iso-8859-15", "latin1", true,
             "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9"},
    Encoding{"iso-8859-16", "iso-8859-16", "", true, "iso-8859-16"},
    Encoding{"koi8-r", "koi8-r", "koi8", true, "cskoi8r koi koi8 koi8-r koi8_r"},
    Encoding{"koi8-u", "koi8-u", "koi8", true, "koi8-ru koi8-u"},
    Encoding{"macintosh", "macintosh", "", true, "csmacintosh mac macintosh x-mac-roman"},
    Encoding{"windows-874", "windows-874", "", true,
             "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874"},
    Encoding{"windows-1250", "windows-1250", "latin2", true, "cp1250 windows-1250 x-cp1250"},
    Encoding{"windows-1251", "windows-1251", "", true, "cp1251 windows-1251 x-cp1251"},
    Encoding{"windows-1252", "windows-1252", "latin1", true,
             "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 "
             "iso8859-1 iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 "
             "x-cp1252"},
    Encoding{"windows-1253", "windows-1253", "greek", true, "cp1253 windows-1253 x-cp1253"},
    Encoding{"windows-1254", "windows-1254", "latin1", true,
             "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 "
             "iso_8859-9:1989 l5 latin5 windows-1254 x-cp1254"},
    Encoding{"windows-1255", "windows-1255", "hebrew", true, "cp1255 windows-1255 x-cp1255"},
    Encoding{"windows-1256", "windows-1256", "arabic", true, "cp1256 windows-1256 x-cp1256"},
    Encoding{"windows-1257", "windows-1257", "baltic", true, "cp1257 windows-1257 x-cp1257"},
    Encoding{"windows-1258", "windows-1258", "", true, "cp1258 windows-1258 x-cp1258"},
    Encoding{"x-mac-cyrillic", "x-mac-cyrillic", "", true, "x-mac-cyrillic x-mac-ukrainian"},
    Encoding{"gbk", "gb18030", "gb", true,
             "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk"},
    Encoding{"gb18030", "gb18030", "gb", true, "gb18030"},
    Encoding{"big5", "big5-hkscs", "", true, "big5 big5-hkscs cn-big5 csbig5 x-x-big5"},
    Encoding{"euc-jp", "euc-jp", "", true, "cseucpkdfmtjapanese euc-jp x-euc-jp"},
    Encoding{"iso-2022-jp", "iso-2022-jp", "", false, "csiso2022jp iso-2022-jp"},
    Encoding{"shift_jis", "windows-31j", "", true,
             "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis"},
    Encoding{"euc-kr", "windows-949", "", true,
             "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 "
             "ksc5601 ksc_5601 windows-949"},
    // WHATWG "replacement" labels, decoded for real (see charset.h).
    Encoding{"iso-2022-kr", "iso-2022-kr", "", false, "csiso2022kr iso-2022-kr", false},
    Encoding{"iso-2022-cn", "iso-2022-cn", "", false, "iso-2022-cn", false},
    Encoding{"iso-2022-cn-ext", "iso-2022-cn-ext", "", false, "iso-2022-cn-ext", false},
    Encoding{"hz-gb-2312", "hz-gb-2312", "", false, "hz-gb-2312", false},
    Encoding{"utf-16be", "UTF-16BE", "", false, "unicodefffe utf-16be"},
    Encoding{"utf-16le", "UTF-16LE", "", false,
             "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le"},
    Encoding{"x-user-defined", "windows-1252", "latin1", true, "x-user-defined", false},
    // Not in the WHATWG table, which has no UTF-32; reachable through a BOM or a label.
    Encoding{"utf-32be", "UTF-32BE", "", false, "utf-32be", false},
    Encoding{"utf-32le", "UTF-32LE", "", false, "utf-32 utf-32le", false},
};

const std::unordered_map<std::string_view, const Encoding*>& label_table() {
  static const auto* const table = [] {
    auto* map = new std::unordered_map<std::string_view, const Encoding*>();
    for (const Encoding& encoding : kEncodings) {
      std::string_view labels = encoding.labels;
      while (!labels.empty()) {
        std::size_t space = labels.find(' ');
        map->emplace(labels.substr(0, space), &encoding);
        labels = space == std::string_view::npos ? "" : labels.substr(space + 1);
      }
    }
    return map;
  }();
  return *table;
}

}  // namespace

std::span<const Encoding> encodings() { return kEncodings; }

const Encoding* find_encoding(std::string_view label) {
  const std::string key = ascii_lowercase(trim_ascii_whitespace(label));
  auto it = label_table().find(key);
  return it == label_table().end() ? nullptr : it->second;
}

}  // namespace neardup
