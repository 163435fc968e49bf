#include "pipeline/decode/convert.h"

#include <unicode/ucnv.h>
#include <unicode/ucnv_cb.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "pipeline/decode/char_tables.h"

namespace neardup::decode_internal {
namespace {

struct ConverterCloser {
  void operator()(UConverter* converter) const { ucnv_close(converter); }
};
using ConverterPtr = std::unique_ptr<UConverter, ConverterCloser>;

// A converter, and the tables of its characters (char_tables.h).
struct CachedConverter {
  ConverterPtr converter;
  std::shared_ptr<const CharTables> tables;  // set when converter is
};

// The tables of the charset `name`, read from `converter` (one of its converters) the first time
// any thread asks: they are the same for every converter of the charset, and reading them costs
// about a millisecond for a double-byte charset. Threads share them read-only.
std::shared_ptr<const CharTables> shared_tables(const std::string& name, UConverter* converter) {
  static std::mutex mutex;
  static auto* const tables =
      new std::unordered_map<std::string, std::shared_ptr<const CharTables>>;
  std::lock_guard lock(mutex);
  std::shared_ptr<const CharTables>& entry = (*tables)[name];
  if (!entry) entry = std::make_shared<const CharTables>(read_char_tables(converter));
  return entry;
}

// Opening a converter parses ICU's alias tables and allocates state, so each thread keeps the
// ones it has used; a null entry remembers that ICU cannot open the name. A converter carries
// conversion state, which is why it is per thread and not shared.
const CachedConverter& cached_converter(const std::string& name) {
  thread_local std::unordered_map<std::string, CachedConverter> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    UErrorCode status = U_ZERO_ERROR;
    CachedConverter entry{ConverterPtr(ucnv_open(name.c_str(), &status))};
    if (U_FAILURE(status)) entry.converter.reset();
    if (entry.converter) entry.tables = shared_tables(name, entry.converter.get());
    it = cache.emplace(name, std::move(entry)).first;
  }
  return it->second;
}

// Writes U+FFFD for every invalid, irregular or unmapped sequence and counts it.
void substitute_and_count(const void* context, UConverterToUnicodeArgs* args, const char*, int32_t,
                          UConverterCallbackReason reason, UErrorCode* status) {
  if (reason > UCNV_IRREGULAR) return;  // reset, close, clone: nothing to write
  ++*static_cast<std::size_t*>(const_cast<void*>(context));
  *status = U_ZERO_ERROR;
  static constexpr UChar kReplacement = 0xFFFD;
  ucnv_cbToUWriteUChars(args, &kReplacement, 1, 0, status);
}

// ISO-2022-KR is KS X 1001 text (EUC-KR without the high bit) between SO and SI, after an
// ESC $ ) C designation. Undoing that gives EUC-KR bytes.
std::string iso2022kr_to_euckr(std::string_view bytes) {
  constexpr std::string_view kDesignation = "\x1B$)C";
  std::string out;
  out.reserve(bytes.size());
  bool shifted = false;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    char c = bytes[i];
    if (bytes.substr(i).starts_with(kDesignation)) {
      i += kDesignation.size() - 1;
    } else if (c == '\x0E') {
      shifted = true;
    } else if (c == '\x0F' || c == '\n') {
      shifted = false;
      if (c == '\n') out += c;
    } else if (shifted && c >= 0x21 && c <= 0x7E) {
      out += static_cast<char>(c | 0x80);
    } else {
      out += c;
    }
  }
  return out;
}

// Converts bytes [*in, end) and appends them to text at *used (text grows as needed). Each call
// starts and ends in the converters' initial state.
void convert_piece(UConverter* source, UConverter* target, const char* in, const char* end,
                   std::string& text, std::size_t& used) {
  UChar pivot[4096];
  UChar* pivot_source = pivot;
  UChar* pivot_target = pivot;
  if (text.size() < used + 2 * static_cast<std::size_t>(end - in) + 16) {
    text.resize(std::max(2 * text.size(), used + 2 * static_cast<std::size_t>(end - in) + 16));
  }
  char* out = text.data() + used;
  bool reset = true;
  for (;;) {
    UErrorCode status = U_ZERO_ERROR;
    ucnv_convertEx(target, source, &out, text.data() + text.size(), &in, end, pivot, &pivot_source,
                   &pivot_target, pivot + std::size(pivot), reset, /*flush=*/true, &status);
    reset = false;
    if (status != U_BUFFER_OVERFLOW_ERROR) break;
    used = static_cast<std::size_t>(out - text.data());
    text.resize(text.size() * 2);
    out = text.data() + used;
  }
  // The callback turns every conversion error into U+FFFD, so a failure left here means ICU
  // itself failed (out of memory); the text converted so far is still valid UTF-8.
  used = static_cast<std::size_t>(out - text.data());
}

// The end of the ICU piece that starts at bytes[pos]: just after the next two ASCII bytes in a
// row, where a character starts again in any stateless charset (the first of them may still
// be a trail byte, or the digit of a four-byte GB18030 sequence that ICU reads with the byte
// after it), or the end.
std::size_t icu_piece_end(std::string_view bytes, std::size_t pos) {
  for (std::size_t i = pos + 2; i < bytes.size(); ++i) {
    if (static_cast<unsigned char>(bytes[i]) < 0x80 &&
        static_cast<unsigned char>(bytes[i - 1]) < 0x80) {
      return i + 1;
    }
  }
  return bytes.size();
}

}  // namespace

bool converter_available(const std::string& converter) {
  return cached_converter(converter).converter != nullptr;
}

std::optional<Converted> convert_to_utf8(std::string_view bytes, const std::string& converter,
                                         bool in_one_pass) {
  if (converter == "iso-2022-kr") {
    return convert_to_utf8(iso2022kr_to_euckr(bytes), "windows-949", in_one_pass);
  }
  const CachedConverter& source = cached_converter(converter);
  UConverter* target = cached_converter("UTF-8").converter.get();
  if (source.converter == nullptr || target == nullptr) return std::nullopt;
  ucnv_resetToUnicode(source.converter.get());
  ucnv_resetFromUnicode(target);

  Converted result;
  UErrorCode status = U_ZERO_ERROR;
  ucnv_setToUCallBack(source.converter.get(), substitute_and_count, &result.errors, nullptr,
                      nullptr, &status);
  if (U_FAILURE(status)) return std::nullopt;

  // Legacy charsets need at most 3 UTF-8 bytes per input byte (the tables' loop asks for that
  // room); ICU alone starts at 2x and grows on demand.
  const bool by_tables = source.tables->usable && !in_one_pass;
  result.text.resize(bytes.size() * (by_tables ? 3 : 2) + 16);
  std::size_t used = 0;
  std::size_t done = 0;  // bytes[..done) are converted
  if (by_tables) {
    // Characters in the tables are looked up; ICU reads the others.
    while (done < bytes.size()) {
      const std::size_t room = used + 3 * (bytes.size() - done) + 16;
      if (result.text.size() < room) result.text.resize(std::max(room, 2 * result.text.size()));
      const TableDecoded decoded =
          decode_by_tables(bytes, done, *source.tables, result.text.data() + used);
      used += decoded.written;
      done = decoded.pos;
      if (done == bytes.size()) break;
      const std::size_t end = icu_piece_end(bytes, done);
      convert_piece(source.converter.get(), target, bytes.data() + done, bytes.data() + end,
                    result.text, used);
      done = end;
    }
  }
  if (done < bytes.size() || bytes.empty()) {
    convert_piece(source.converter.get(), target, bytes.data() + done, bytes.data() + bytes.size(),
                  result.text, used);
  }
  result.text.resize(used);
  return result;
}

}  // namespace neardup::decode_internal
