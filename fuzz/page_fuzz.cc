// Page bytes through the pure pipeline (decode, denoise, features, both signatures). The first
// byte picks the declared Content-Type, so that the charset paths are reached too.
#include <array>
#include <string_view>

#include "fuzz/fuzz_target.h"
#include "pipeline/pipeline.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace neardup;
  static const Config config;
  static constexpr std::array<std::string_view, 6> kTypes = {
      "", "text/html", "text/html; charset=utf-8", "text/html; charset=gbk",
      "text/html; charset=shift_jis", "text/plain; charset=windows-1251"};
  if (size == 0) return 0;
  const std::string_view type = kTypes[data[0] % kTypes.size()];
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  const PageFingerprint page = fingerprint_page(body, type, config, {.keep_text = true});
  if (!page.skip && page.feature_count == 0) __builtin_trap();  // fingerprinted from nothing
  return 0;
}
