#include "pipeline/minhash/minhash.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>

#include "common/mix.h"
#include "pipeline/features/features.h"

namespace neardup {
namespace {

std::string read_testdata(const std::string& name) {
  std::ifstream in(std::string(NEARDUP_SOURCE_DIR) + "/pipeline/features/testdata/" + name,
                   std::ios::binary);
  EXPECT_TRUE(in) << name;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::uint64_t> tokens_of(const std::string& text) {
  return hash_tokens(text, FeaturesConfig{}, 0).hashes;
}

Sketch sketch_of(const std::string& text, const MinHashConfig& config = {}) {
  return minhash_sketch(tokens_of(text), config, 0);
}

// The exact Jaccard similarity of the two texts' w-shingle sets, by the definition.
double exact_jaccard(const std::string& a, const std::string& b, std::size_t w = 5) {
  auto shingles = [&](const std::string& text) {
    std::vector<std::uint64_t> t = tokens_of(text);
    std::set<std::vector<std::uint64_t>> out;
    for (std::size_t i = 0; i + w <= t.size(); ++i) out.emplace(t.begin() + i, t.begin() + i + w);
    return out;
  };
  auto sa = shingles(a), sb = shingles(b);
  std::size_t common = 0;
  for (const auto& s : sa) common += sb.count(s);
  return static_cast<double>(common) / static_cast<double>(sa.size() + sb.size() - common);
}

// The first `fraction` of the text's sentences (cut after a full stop).
std::string truncated(const std::string& text, double fraction) {
  std::size_t cut = text.find('.', static_cast<std::size_t>(text.size() * fraction));
  return text.substr(0, cut == std::string::npos ? text.size() : cut + 1);
}

TEST(MinHash, IdenticalTextGivesAnIdenticalSketch) {
  const std::string text = read_testdata("en_library.txt");
  Sketch a = sketch_of(text), b = sketch_of(text);
  ASSERT_EQ(a.size(), 128u);
  EXPECT_EQ(a, b);
  EXPECT_DOUBLE_EQ(estimate_jaccard(a, b), 1.0);
}

TEST(MinHash, SeedAndLengthChangeTheSketch) {
  const auto tokens = tokens_of(read_testdata("en_library.txt"));
  EXPECT_NE(minhash_sketch(tokens, {}, 0), minhash_sketch(tokens, {}, 1));
  MinHashConfig longer;
  longer.hashes = 256;
  EXPECT_EQ(minhash_sketch(tokens, longer, 0).size(), 256u);
  // The first 128 functions are the same ones whatever the length.
  Sketch prefix = minhash_sketch(tokens, longer, 0);
  prefix.resize(128);
  EXPECT_EQ(prefix, minhash_sketch(tokens, {}, 0));
}

TEST(MinHash, EmptyTextHasAnEmptySketchAndShortTextOneShingle) {
  EXPECT_TRUE(minhash_sketch({}, {}, 0).empty());
  Sketch two_words = sketch_of("hello world");
  EXPECT_EQ(two_words.size(), 128u);
  EXPECT_EQ(two_words, sketch_of("Hello, WORLD!"));  // the same normalised tokens
  EXPECT_LT(estimate_jaccard(two_words, sketch_of("hello there")), 0.05);
}

TEST(MinHash, EstimateIsWithinATenthOfTheExactJaccard) {
  const std::string library = read_testdata("en_library.txt"), harvest =
                                                                   read_testdata("en_harvest.txt");
  const std::string metro = read_testdata("zh_metro.txt"), tea = read_testdata("zh_tea.txt");
  // A paragraph dropped, a truncated copy, an unrelated text, two texts joined.
  const std::string dropped = library.substr(0, library.find('\n')) +
                              library.substr(library.find('\n', library.find('\n') + 1));
  const std::pair<std::string, std::string> pairs[] = {
      {library, dropped},        {library, truncated(library, 0.7)},
      {library, harvest},        {metro, truncated(metro, 0.5)},
      {metro, tea},              {library + "\n" + harvest, harvest},
      {metro + "\n" + tea, tea}, {harvest, truncated(harvest, 0.9)},
  };
  for (const auto& [a, b] : pairs) {
    const double exact = exact_jaccard(a, b);
    const double estimate = estimate_jaccard(sketch_of(a), sketch_of(b));
    EXPECT_NEAR(estimate, exact, 0.1) << a.substr(0, 40) << " / " << b.substr(0, 40);
  }
}

TEST(MinHash, ATruncatedCopySharesABandAndPassesTheThreshold) {
  const std::string text = read_testdata("en_library.txt");
  Sketch whole = sketch_of(text), copy = sketch_of(truncated(text, 0.7));
  EXPECT_GE(estimate_jaccard(whole, copy), 0.5);
  for (const LshDesign lsh : {kDefaultLsh, kFormerDefaultLsh}) {
    EXPECT_TRUE(shares_any_band(whole, copy, lsh.bands, lsh.rows)) << lsh.bands;
    EXPECT_FALSE(
        shares_any_band(whole, sketch_of(read_testdata("en_harvest.txt")), lsh.bands, lsh.rows))
        << lsh.bands;
  }
}

TEST(Sketch, BandKeysDifferByBandAndMatchOnEqualValues) {
  Sketch a = {1, 2, 3, 1, 2, 3}, b = {1, 2, 3, 9, 9, 9};
  EXPECT_NE(band_key(a, 0, 3), band_key(a, 1, 3));  // the same values in two bands
  EXPECT_EQ(band_key(a, 0, 3), band_key(b, 0, 3));
  EXPECT_NE(band_key(a, 1, 3), band_key(b, 1, 3));
  EXPECT_TRUE(shares_band(a, b, 0, 3));
  EXPECT_FALSE(shares_band(a, b, 1, 3));
}

TEST(Sketch, WideBandKeysHashTheUpperValuesToo) {
  const Sketch a = {1, 2, 3, 1, 2, 3}, b = a;
  const SketchUpper upper = {7, 8, 9, 7, 8, 9}, other = {7, 8, 9, 7, 8, 10};
  // Equal in all 32 bits: the same key; in the 16 alone: not a wide key's match.
  EXPECT_EQ(band_key(a, upper, 0, 3), band_key(b, upper, 0, 3));
  EXPECT_NE(band_key(a, upper, 1, 3), band_key(b, other, 1, 3));
  EXPECT_EQ(band_key(a, upper, 0, 3), band_key(b, other, 0, 3));
  EXPECT_EQ(band_key(a, 1, 3), band_key(b, 1, 3));
  // A wide key is never the narrow key of the same values, nor the same band's for another.
  EXPECT_NE(band_key(a, upper, 0, 3), band_key(a, 0, 3));
  EXPECT_NE(band_key(a, upper, 0, 3), band_key(a, upper, 1, 3));
  EXPECT_EQ(band_key(a, {}, 0, 3), band_key(a, 0, 3));  // no upper values: the narrow key
  // shares_any_band with upper values: a band whose 16 bits agree but not its upper values is
  // not shared; without either page's upper values, the 16 bits decide.
  const Sketch c = {1, 2, 3, 9, 9, 9};
  EXPECT_TRUE(shares_any_band(a, upper, c, upper, 2, 3));
  EXPECT_FALSE(shares_any_band(a, upper, c, SketchUpper{6, 8, 9, 7, 8, 9}, 2, 3));
  EXPECT_TRUE(shares_any_band(a, upper, c, SketchUpper{}, 2, 3));
}

TEST(MinHash, UpperValuesAreTheRestOfTheSameMinima) {
  const std::string text = read_testdata("en_library.txt");
  MinHashConfig config;
  SketchUpper upper, again;
  const Sketch sketch = minhash_sketch(tokens_of(text), config, 42, &upper);
  EXPECT_EQ(minhash_sketch(tokens_of(text), config, 42), sketch);  // asked for or not
  ASSERT_EQ(upper.size(), sketch.size());
  // The minima of a copy with the same shingles are the same: equal in all 32 bits.
  EXPECT_EQ(minhash_sketch(tokens_of(text + " "), config, 42, &again), sketch);
  EXPECT_EQ(again, upper);
  // By the definition (minhash.h): value j's minimum over the shingles of h_j, its low 16 bits
  // the sketch's value and the next 16 the upper value.
  const std::vector<std::uint64_t> tokens = tokens_of(text);
  for (std::uint32_t j = 0; j < config.hashes; ++j) {
    const std::uint8_t le[4] = {static_cast<std::uint8_t>(j), static_cast<std::uint8_t>(j >> 8),
                                static_cast<std::uint8_t>(j >> 16),
                                static_cast<std::uint8_t>(j >> 24)};
    const std::uint64_t salt = XXH3_64bits_withSeed(le, sizeof le, 42);
    std::uint64_t min = ~std::uint64_t{0};
    for (std::size_t i = 0; i + config.shingle <= tokens.size(); ++i) {
      const std::uint64_t shingle =
          XXH3_64bits_withSeed(&tokens[i], config.shingle * sizeof(std::uint64_t), 42);
      min = std::min(min, mix64(shingle ^ salt));
    }
    EXPECT_EQ(sketch[j], static_cast<std::uint16_t>(min)) << j;
    EXPECT_EQ(upper[j], static_cast<std::uint16_t>(min >> 16)) << j;
  }
  minhash_sketch({}, config, 42, &upper);
  EXPECT_TRUE(upper.empty());
}

TEST(Sketch, EstimateCorrectsForChanceAgreementOfLowBits) {
  Sketch a(128, 7), b(128, 7), c(128, 8);
  EXPECT_DOUBLE_EQ(estimate_jaccard(a, b), 1.0);
  EXPECT_DOUBLE_EQ(estimate_jaccard(a, c), 0.0);
  EXPECT_DOUBLE_EQ(estimate_jaccard(a, Sketch{}), 0.0);
}

TEST(Sketch, ValuesCompareInTheirLowBitsAndBandsInAllOfThem) {
  Sketch a(128, 0x0107), low_equal(128, 0x0207);
  // b-bit minwise: the estimate sees the low kSketchBits bits alone (what the index stores).
  EXPECT_DOUBLE_EQ(estimate_jaccard(a, low_equal), 1.0);
  EXPECT_TRUE(same_sketch(a, low_equal));
  // A band is shared when all 16 bits agree (its key hashes them), unless told to look at the
  // stored bits only.
  EXPECT_FALSE(shares_band(a, low_equal, 0, 3));
  EXPECT_TRUE(shares_band(a, low_equal, 0, 3, kSketchMask));
  EXPECT_NE(band_key(a, 0, 3), band_key(low_equal, 0, 3));
}

// Half of the values equal, the rest unrelated: the estimate corrected for the 1 / 2^b chance
// agreement of the rest is J = 0.5 on average (unbiased), while the raw share of equal values
// is J + (1 - J) / 2^b.
TEST(Sketch, EstimateIsUnbiasedForRandomValues) {
  std::mt19937_64 rng(7);
  double sum = 0;
  constexpr int kPairs = 4000;
  for (int p = 0; p < kPairs; ++p) {
    Sketch a(128), b(128);
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = static_cast<std::uint16_t>(rng());
      b[i] = i % 2 == 0 ? a[i] : static_cast<std::uint16_t>(rng());
    }
    sum += estimate_jaccard(a, b);
  }
  EXPECT_NEAR(sum / kPairs, 0.5, 0.002);
}

}  // namespace
}  // namespace neardup
