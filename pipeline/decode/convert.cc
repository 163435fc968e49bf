#include "pipeline/decode/convert.h"

#include <unicode/ucnv.h>
#include <unicode/ucnv_cb.h>

#include <memory>
#include <unordered_map>

namespace neardup::decode_internal {
namespace {

struct ConverterCloser {
  void operator()(UConverter* converter) const { ucnv_close(converter); }
};
using ConverterPtr = std::unique_ptr<UConverter, ConverterCloser>;

// Opening a converter parses ICU's alias tables and allocates state, so each thread keeps the
// ones it has used; a null entry remembers that ICU cannot open the name. A converter carries
// conversion state, which is why it is per thread and not shared.
UConverter* cached_converter(const std::string& name) {
  thread_local std::unordered_map<std::string, ConverterPtr> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    UErrorCode status = U_ZERO_ERROR;
    ConverterPtr converter(ucnv_open(name.c_str(), &status));
    if (U_FAILURE(status)) converter.reset();
    it = cache.emplace(name, std::move(converter)).first;
  }
  return it->second.get();
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

}  // namespace

bool converter_available(const std::string& converter) {
  return cached_converter(converter) != nullptr;
}

std::optional<Converted> convert_to_utf8(std::string_view bytes, const std::string& converter) {
  if (converter == "iso-2022-kr") return convert_to_utf8(iso2022kr_to_euckr(bytes), "windows-949");
  UConverter* source = cached_converter(converter);
  UConverter* target = cached_converter("UTF-8");
  if (source == nullptr || target == nullptr) return std::nullopt;
  ucnv_resetToUnicode(source);
  ucnv_resetFromUnicode(target);

  Converted result;
  UErrorCode status = U_ZERO_ERROR;
  ucnv_setToUCallBack(source, substitute_and_count, &result.errors, nullptr, nullptr, &status);
  if (U_FAILURE(status)) return std::nullopt;

  // Legacy charsets need at most 3 UTF-8 bytes per input byte; start at 2x and grow on demand.
  result.text.resize(bytes.size() * 2 + 16);
  char* out = result.text.data();
  const char* in = bytes.data();
  UChar pivot[4096];
  UChar* pivot_source = pivot;
  UChar* pivot_target = pivot;
  bool reset = true;
  for (;;) {
    status = U_ZERO_ERROR;
    ucnv_convertEx(target, source, &out, result.text.data() + result.text.size(), &in,
                   bytes.data() + bytes.size(), pivot, &pivot_source, &pivot_target,
                   pivot + std::size(pivot), reset, /*flush=*/true, &status);
    reset = false;
    if (status != U_BUFFER_OVERFLOW_ERROR) break;
    std::size_t used = static_cast<std::size_t>(out - result.text.data());
    result.text.resize(result.text.size() * 2);
    out = result.text.data() + used;
  }
  result.text.resize(static_cast<std::size_t>(out - result.text.data()));
  // The callback turns every conversion error into U+FFFD, so a failure left here means ICU
  // itself failed (out of memory); the text converted so far is still valid UTF-8.
  return result;
}

}  // namespace neardup::decode_internal
