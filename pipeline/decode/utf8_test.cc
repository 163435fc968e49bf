#include "pipeline/decode/utf8.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace neardup::decode_internal {
namespace {

void expect_same_scan(const std::string& bytes) {
  const Utf8Scan fast = scan_utf8(bytes);
  const Utf8Scan bytewise = scan_utf8_bytewise(bytes);
  EXPECT_EQ(fast.multibyte, bytewise.multibyte);
  EXPECT_EQ(fast.invalid, bytewise.invalid);
}

TEST(Utf8Scan, CountsSequencesAndIllFormedSubparts) {
  const Utf8Scan scan = scan_utf8("a\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80");  // é 中 😀
  EXPECT_EQ(scan.multibyte, 3u);
  EXPECT_EQ(scan.invalid, 0u);
  EXPECT_TRUE(scan_utf8("plain").ascii());
  // A lone continuation byte, an overlong form, a surrogate, a cut-off sequence.
  for (const std::string bad : {"a\x80z", "\xC0\xAF", "\xED\xA0\x80", "x\xE4\xB8"}) {
    EXPECT_FALSE(scan_utf8(bad).valid()) << bad;
    expect_same_scan(bad);
  }
}

// Valid text, and valid text with bytes changed at random: the validator's answer and the
// sequence-by-sequence scan agree on every count.
TEST(Utf8Scan, EqualsTheBytewiseScanOnValidAndDamagedText) {
  const std::string pieces[] = {"a",
                                " ",
                                "\xC3\xA9",
                                "\xD0\x96",
                                "\xE4\xB8\xAD",
                                "\xE3\x81\x82",
                                "\xF0\x9F\x98\x80",
                                "\xEF\xBC\x8C",
                                "<p>"};
  std::mt19937 rng(3);
  for (int n = 0; n < 5000; ++n) {
    std::string text;
    const int length = static_cast<int>(rng() % 200);
    for (int i = 0; i < length; ++i) text += pieces[rng() % std::size(pieces)];
    if (n % 2 == 1 && !text.empty()) {
      for (int k = 0; k < 1 + static_cast<int>(rng() % 3); ++k) {
        text[rng() % text.size()] = static_cast<char>(rng() % 256);
      }
    }
    expect_same_scan(text);
  }
}

}  // namespace
}  // namespace neardup::decode_internal
