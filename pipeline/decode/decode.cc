#include "pipeline/decode/decode.h"

#include <algorithm>
#include <optional>

#include "pipeline/decode/charset.h"
#include "pipeline/decode/convert.h"
#include "pipeline/decode/detect.h"
#include "pipeline/decode/prescan.h"
#include "pipeline/decode/sniff.h"
#include "pipeline/decode/utf8.h"

namespace neardup {
namespace decode_internal {
namespace {

// Binary content and UTF-16/32 without a BOM show in the first bytes (browsers sniff 1445).
constexpr std::size_t kSniffBytes = 4096;
// uchardet and the plausibility check read a window of the body, not all of it: 64 KiB from
// the start, or from just before the first non-ASCII byte when that lies past 32 KiB, widened
// (up to 1 MiB) while it holds fewer than kDetectMinNonAscii non-ASCII bytes, the evidence both
// need.
constexpr std::size_t kDetectWindow = 64 * 1024;
constexpr std::size_t kDetectWindowMax = 1024 * 1024;
constexpr std::size_t kDetectMinNonAscii = 1024;
// Bytes that are UTF-8 except for at most one ill-formed subpart per this many well-formed
// multi-byte sequences are damaged UTF-8 (a stray Latin-1 byte), not another charset: no legacy
// charset produces that many well-formed UTF-8 sequences by chance.
constexpr std::size_t kMostlyUtf8Ratio = 20;
// Detection overrules a declared charset only when the declared decoding is implausible on its
// own and this many times more implausible than the candidate's. Measured on the pages of
// scripts/eval/charsets.py: correct decodings score 0-0.055 per non-ASCII byte, the seven wrong
// labels 0.09 (GBK read as Big5) to 0.82 (windows-1251 read as windows-1252), each at least 20
// times the score of the right charset.
constexpr double kImplausibleScore = 0.03;
// A declaration is not overruled on fewer non-ASCII bytes than this: a handful of bytes
// decodes plausibly in too many charsets.
constexpr std::size_t kOverruleMinNonAscii = 32;
constexpr double kOverruleFactor = 2.5;

struct Window {
  std::string_view bytes;
  std::size_t non_ascii = 0;
};

std::size_t count_non_ascii(std::string_view bytes) {
  return static_cast<std::size_t>(std::count_if(
      bytes.begin(), bytes.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; }));
}

Window detection_window(std::string_view body) {
  // Starting at 0 keeps the whole of a typical page in the window, so that its decoding can be
  // reused; 256 bytes of markup before the first non-ASCII byte give the detector context.
  std::size_t start = first_non_ascii(body);
  start = start < kDetectWindow / 2 ? 0 : start - 256;
  std::size_t end = std::min(body.size(), start + kDetectWindow);
  Window window{body.substr(start, end - start), count_non_ascii(body.substr(start, end - start))};
  while (window.non_ascii < kDetectMinNonAscii && end < body.size() &&
         end - start < kDetectWindowMax) {
    std::size_t next = std::min(body.size(), end + kDetectWindow);
    window.non_ascii += count_non_ascii(body.substr(end, next - end));
    end = next;
    window.bytes = body.substr(start, end - start);
  }
  return window;
}

// Decodes bytes known to be in charset. scan describes the same bytes, when known.
std::string decode_as(std::string_view bytes, const Charset& charset,
                      std::optional<Utf8Scan> scan = std::nullopt) {
  if (charset.is_utf8()) {
    if (!scan) scan = scan_utf8(bytes);
    return scan->valid() ? std::string(bytes) : repair_utf8(bytes);
  }
  if (scan && scan->ascii() && charset.ascii_compatible) return std::string(bytes);
  if (auto converted = convert_to_utf8(bytes, charset.converter)) return std::move(converted->text);
  // resolve_charset only returns charsets whose converter opens, so this is unreachable short
  // of ICU failing to allocate; the bytes still become valid UTF-8.
  return repair_utf8(bytes);
}

Decoded decoded(std::string text, const Charset& charset, std::string source) {
  return Decoded{std::move(text), charset.name, std::move(source)};
}

const Charset& utf8_charset() {
  static const Charset charset = *resolve_charset("utf-8");
  return charset;
}

Charset default_charset(const DecodeConfig& config) {
  if (auto charset = resolve_charset(config.default_charset)) return *charset;
  return *resolve_charset("windows-1252");
}

struct Declared {
  Charset charset;
  std::string source;  // http | meta | xml
};

std::optional<Declared> find_declaration(std::string_view body, const MediaType& media,
                                         const DecodeConfig& config) {
  if (!media.charset.empty()) {
    if (auto charset = resolve_declared_charset(media.charset)) return Declared{*charset, "http"};
  }
  Declaration declaration = prescan_declaration(body.substr(0, config.prescan_bytes));
  if (declaration.label.empty()) return std::nullopt;
  auto charset = resolve_declared_charset(declaration.label);
  if (!charset) return std::nullopt;
  // The HTML Standard reads a document-internal UTF-16 label as UTF-8: bytes in which the
  // prescan found ASCII markup are not UTF-16.
  if (charset->is_wide()) charset = utf8_charset();
  return Declared{*charset, declaration.source};
}

std::expected<Decoded, Skip> decode_page(std::string_view body, std::string_view content_type,
                                         const DecodeConfig& config) {
  if (body.empty()) return std::unexpected(Skip{"empty_body", ""});
  MediaType media = parse_content_type(content_type);
  if (is_binary_media_type(media.type)) {
    return std::unexpected(Skip{"not_text", "Content-Type " + media.type});
  }
  if (auto bom = sniff_bom(body)) {
    Charset charset = *resolve_charset(bom->charset);
    return decoded(decode_as(body.substr(bom->length), charset), charset, "bom");
  }

  std::optional<Declared> declared = find_declaration(body, media, config);
  if (declared && declared->charset.is_wide()) {  // only HTTP can declare UTF-16
    return decoded(decode_as(body, declared->charset), declared->charset, declared->source);
  }
  std::string_view head = body.substr(0, kSniffBytes);
  if (config.detect && head.find('\0') != std::string_view::npos) {
    if (auto wide = sniff_wide_unicode(head)) {
      Charset charset = *resolve_charset(*wide);
      return decoded(decode_as(body, charset), charset, "detected");
    }
  }
  if (looks_binary(head)) return std::unexpected(Skip{"not_text", "binary bytes"});

  Utf8Scan utf8 = scan_utf8(body);
  if (!config.detect) {
    Charset charset = declared ? declared->charset : default_charset(config);
    return decoded(decode_as(body, charset, utf8), charset,
                   declared ? declared->source : "default");
  }
  const bool mostly_utf8 = utf8.multibyte > 0 && utf8.invalid * kMostlyUtf8Ratio <= utf8.multibyte;

  if (!declared) {
    if (utf8.multibyte > 0 && (utf8.valid() || mostly_utf8)) {
      return decoded(decode_as(body, utf8_charset(), utf8), utf8_charset(), "detected");
    }
    if (first_non_ascii(body) < body.size()) {
      Window window = detection_window(body);
      if (auto detected = resolve_detected_charset(detect_with_uchardet(window.bytes))) {
        return decoded(decode_as(body, *detected, utf8), *detected, "detected");
      }
    }
    Charset charset = default_charset(config);
    return decoded(decode_as(body, charset, utf8), charset, "default");
  }

  const Charset& label = declared->charset;
  if (label.is_utf8()) {
    if (utf8.valid() || mostly_utf8)
      return decoded(decode_as(body, label, utf8), label, declared->source);
  } else if (utf8.valid() && utf8.multibyte > 0) {
    // The classic fault: a page saved or transcoded to UTF-8 that kept its legacy <meta>.
    return decoded(std::string(body), utf8_charset(), "detected");
  } else if (utf8.ascii()) {
    return decoded(decode_as(body, label, utf8), label, declared->source);
  }
  // The bytes are not all ASCII or UTF-8 as the label would have them: measure how plausible
  // the label's decoding looks, and only when it looks wrong ask the detector, believing it only
  // if its charset decodes the bytes far more plausibly.
  Window window = detection_window(body);
  const bool whole = window.bytes.size() == body.size();
  std::string text = decode_as(window.bytes, label, whole ? std::optional(utf8) : std::nullopt);
  double score = implausibility(text, window.non_ascii);
  if (score >= kImplausibleScore && window.non_ascii >= kOverruleMinNonAscii) {
    std::optional<Charset> candidate =
        mostly_utf8 ? utf8_charset() : resolve_detected_charset(detect_with_uchardet(window.bytes));
    if (candidate && candidate->family != label.family) {
      std::string candidate_text = decode_as(window.bytes, *candidate);
      if (implausibility(candidate_text, window.non_ascii) * kOverruleFactor < score) {
        if (!whole) candidate_text = decode_as(body, *candidate, utf8);
        return decoded(std::move(candidate_text), *candidate, "detected");
      }
    }
  }
  if (!whole) text = decode_as(body, label, utf8);
  return decoded(std::move(text), label, declared->source);
}

}  // namespace
}  // namespace decode_internal

std::string canonical_charset(std::string_view label) {
  auto charset = decode_internal::resolve_charset(label);
  return charset ? charset->name : "";
}

std::expected<Decoded, Skip> decode(std::string_view body, std::string_view content_type,
                                    const DecodeConfig& config) {
  return decode_internal::decode_page(body, content_type, config);
}

}  // namespace neardup
