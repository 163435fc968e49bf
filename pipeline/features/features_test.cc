#include "pipeline/features/features.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/features/stop_words.h"
#include "pipeline/fingerprint/fingerprint.h"

namespace neardup {
namespace {

using ::testing::ElementsAre;

FeaturesConfig unigrams(Weighting weighting = Weighting::kTf) {
  FeaturesConfig config;
  config.ngram = 1;
  config.weighting = weighting;
  return config;
}

std::string read_testdata(const std::string& name) {
  std::ifstream in(std::string(NEARDUP_SOURCE_DIR) + "/pipeline/features/testdata/" + name,
                   std::ios::binary);
  EXPECT_TRUE(in) << name;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Replaces the first occurrence of from (which must occur) by to.
std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

int distance(const std::string& a, const std::string& b, const FeaturesConfig& config = {}) {
  return hamming_distance(simhash(extract_features(a, config, 0)),
                          simhash(extract_features(b, config, 0)));
}

bool contains(const std::vector<std::string>& tokens, const std::string& token) {
  return std::find(tokens.begin(), tokens.end(), token) != tokens.end();
}

TEST(Features, EmptyTextHasNoFeatures) {
  EXPECT_TRUE(extract_features("", FeaturesConfig{}, 0).empty());
  EXPECT_TRUE(extract_features(" .,;!? — «» 🙂 ", FeaturesConfig{}, 0).empty());
}

TEST(Features, EnglishSplitsIntoLowerCaseWordsWithoutPunctuation) {
  EXPECT_THAT(tokenize("Hello, World! It's -- (really).", FeaturesConfig{}),
              ElementsAre("hello", "world", "it's", "really"));
}

TEST(Features, RussianIsCaseFoldedAndSplitOnPunctuation) {
  EXPECT_THAT(tokenize("Привет, МИР! «Москва» — столица.", FeaturesConfig{}),
              ElementsAre("привет", "мир", "москва", "столица"));
}

FeaturesConfig cjk_words() {
  FeaturesConfig config;
  config.cjk = CjkTokens::kWords;
  return config;
}

TEST(Features, HanAndKanaRunsBecomeCharacterBigrams) {
  EXPECT_THAT(tokenize("我们今天去北京。", FeaturesConfig{}),
              ElementsAre("我们", "们今", "今天", "天去", "去北", "北京"));
  // Kana and kanji form one run; punctuation and Latin words end it; a lone character is a
  // token of its own; full-width Latin is folded to a word, which the break iterator splits.
  EXPECT_THAT(tokenize("東京のＡＰＩ、水。Hello world", FeaturesConfig{}),
              ElementsAre("東京", "京の", "api", "水", "hello", "world"));
  // The prolonged sound mark belongs to its katakana word.
  EXPECT_THAT(tokenize("コーヒー", FeaturesConfig{}), ElementsAre("コー", "ーヒ", "ヒー"));
  // Paragraphs are counted across runs.
  const TokenHashes hashes = hash_tokens("北京\nabc 上海\n東京", FeaturesConfig{}, 0);
  EXPECT_THAT(hashes.paragraph_ends, ElementsAre(1, 3, 4));
}

TEST(Features, ChineseIsSegmentedIntoDictionaryWords) {
  std::vector<std::string> tokens = tokenize("我们今天去北京大学学习中文。", cjk_words());
  // Seven Han characters or more are not seven one-character tokens: the dictionary groups them.
  ASSERT_FALSE(tokens.empty());
  EXPECT_LT(tokens.size(), 10u);
  EXPECT_TRUE(contains(tokens, "我们"));
  EXPECT_TRUE(contains(tokens, "今天"));
  EXPECT_TRUE(contains(tokens, "学习"));
  EXPECT_FALSE(contains(tokens, "。"));
}

TEST(Features, JapaneseIsSegmentedIntoDictionaryWords) {
  std::vector<std::string> tokens = tokenize("東京都の天気は晴れです。", cjk_words());
  ASSERT_FALSE(tokens.empty());
  EXPECT_TRUE(std::any_of(tokens.begin(), tokens.end(),
                          [](const std::string& t) { return t.starts_with("東京"); }));
  EXPECT_TRUE(contains(tokens, "天気"));
  EXPECT_FALSE(contains(tokens, "。"));
}

TEST(Features, ThaiIsSegmentedIntoWords) {
  // "ภาษาไทย ง่าย" is written without spaces between words: ภาษา|ไทย.
  std::vector<std::string> tokens = tokenize("ภาษาไทยง่าย", FeaturesConfig{});
  EXPECT_GE(tokens.size(), 2u);
  EXPECT_TRUE(contains(tokens, "ภาษา"));
}

TEST(Features, FullWidthAndCaseVariantsNormaliseToTheSameTokens) {
  EXPECT_THAT(tokenize("ＨＥＬＬＯ Straße ﬁle", FeaturesConfig{}),
              ElementsAre("hello", "strasse", "file"));
  EXPECT_EQ(extract_features("Ｗｏｒｌｄ Ｃｕｐ", FeaturesConfig{}, 7)[0].hash,
            extract_features("world cup", FeaturesConfig{}, 7)[0].hash);
}

TEST(Features, TypographicVariantsTokeniseAlike) {
  const FeaturesConfig config;
  EXPECT_THAT(tokenize("“Don’t,” she said — it’s…", config),
              ElementsAre("don't", "she", "said", "it's"));
  EXPECT_EQ(tokenize("“Don’t,” she said — it’s…", config),
            tokenize("\"Don't,\" she said -- it's...", config));
  // UTF-8 read as windows-1252 ("â€™", "â€”", "Ã©") and as ISO-8859-1 (C1 controls).
  EXPECT_EQ(tokenize("It\xC3\xA2\xE2\x82\xAC\xE2\x84\xA2s a caf\xC3\x83\xC2\xA9\xC3\xA2\xE2\x82"
                     "\xAC\xE2\x80\x9Dnear\xC3\xA2\xC2\x80\xC2\x94"
                     "by",
                     config),
            tokenize("It’s a café—near—by", config));
  // No-break, narrow no-break and zero-width spaces, the word joiner and soft hyphens.
  EXPECT_EQ(tokenize("two\xC2\xA0words and\xE2\x80\xAFmore", config),
            tokenize("two words and more", config));
  EXPECT_EQ(tokenize("zero\xE2\x80\x8Bwidth word\xE2\x81\xA0joiner soft\xC2\xADhyphen", config),
            tokenize("zerowidth wordjoiner softhyphen", config));
}

TEST(Features, NumbersAreNotTokens) {
  EXPECT_THAT(
      tokenize("Posted 11.01.2012 08:20, ２０２４ views, 3.14 and 1,000 more", FeaturesConfig{}),
      ElementsAre("posted", "views", "and", "more"));
  EXPECT_THAT(tokenize("H5N1 and covid19 on mp3", FeaturesConfig{}),
              ElementsAre("h5n1", "and", "covid19", "on", "mp3"));
  EXPECT_EQ(extract_features("updated 14:49 16/01/2012 today", FeaturesConfig{}, 0)[0].hash,
            extract_features("updated 9:05 17/01/2012 today", FeaturesConfig{}, 0)[0].hash);
}

TEST(Features, ShinglesStayInsideParagraphs) {
  // "one two three" and "four five": 2 + 1 bigrams; across the break would add "three four".
  EXPECT_EQ(extract_features("one two three\nfour five", FeaturesConfig{}, 0).size(), 3u);
  EXPECT_EQ(extract_features("one two three four five", FeaturesConfig{}, 0).size(), 4u);
  EXPECT_EQ(extract_features("one two three\r\nfour five", FeaturesConfig{}, 0).size(), 3u);
  // A one-token paragraph is one shorter shingle.
  EXPECT_EQ(extract_features("one two\nthree", FeaturesConfig{}, 0).size(), 2u);
}

TEST(Features, RepeatedParagraphsCountOnce) {
  const std::vector<Feature> once = extract_features("photo by the wire service", {}, 0);
  const std::vector<Feature> twice =
      extract_features("Photo by the wire service.\nphoto by the wire service", {}, 0);
  ASSERT_EQ(once.size(), twice.size());
  for (std::size_t i = 0; i < once.size(); ++i) {
    EXPECT_EQ(once[i].hash, twice[i].hash);
    EXPECT_EQ(once[i].weight, twice[i].weight);
  }
}

TEST(Features, ShortParagraphsWeighByTheirShareOfTwentyFourTokens) {
  std::string prose;
  for (int i = 0; i < 30; ++i) {
    prose += {'w', static_cast<char>('a' + i % 26), static_cast<char>('a' + i / 26), ' '};
  }
  const std::vector<Feature> short_line = extract_features("read more here", unigrams(), 0);
  ASSERT_EQ(short_line.size(), 3u);
  for (const Feature& f : short_line) EXPECT_DOUBLE_EQ(f.weight, 3.0 / 24.0);
  for (const Feature& f : extract_features(prose, unigrams(), 0)) EXPECT_GE(f.weight, 1.0);
}

TEST(Features, InvalidUtf8BecomesReplacementAndIsDropped) {
  EXPECT_THAT(tokenize("abc\xff\xfe def", FeaturesConfig{}), ElementsAre("abc", "def"));
}

TEST(Features, TrigramsOfFiveTokensAreThreeShingles) {
  FeaturesConfig config;
  config.ngram = 3;
  EXPECT_EQ(extract_features("one two three four five", config, 0).size(), 3u);
  config.ngram = 2;
  EXPECT_EQ(extract_features("one two three four five", config, 0).size(), 4u);
}

TEST(Features, TextShorterThanNGramGivesOneShorterShingle) {
  FeaturesConfig config;
  config.ngram = 5;
  std::vector<Feature> short_text = extract_features("just two", config, 0);
  ASSERT_EQ(short_text.size(), 1u);
  config.ngram = 2;
  EXPECT_EQ(extract_features("just two", config, 0)[0].hash, short_text[0].hash);
}

TEST(Features, ShingleOrderMatters) {
  FeaturesConfig config;
  config.ngram = 2;
  EXPECT_NE(extract_features("alpha beta", config, 0)[0].hash,
            extract_features("beta alpha", config, 0)[0].hash);
}

TEST(Features, RepeatedShinglesAreOneFeatureWeightedByCount) {
  const std::string text = "spam spam spam eggs";
  std::vector<Feature> tf = extract_features(text, unigrams(Weighting::kTf), 0);
  std::vector<Feature> log_tf = extract_features(text, unigrams(Weighting::kLogTf), 0);
  std::vector<Feature> binary = extract_features(text, unigrams(Weighting::kBinary), 0);
  ASSERT_EQ(tf.size(), 2u);
  ASSERT_EQ(log_tf.size(), 2u);
  ASSERT_EQ(binary.size(), 2u);
  std::multiset<double> tf_weights, log_weights, binary_weights;
  for (int i = 0; i < 2; ++i) {
    tf_weights.insert(tf[i].weight);
    log_weights.insert(log_tf[i].weight);
    binary_weights.insert(binary[i].weight);
  }
  // A four-token paragraph: every occurrence has the share 4 / 24.
  const double share = 4.0 / 24.0;
  EXPECT_EQ(tf_weights, (std::multiset<double>{share, 3.0 * share}));
  EXPECT_EQ(log_weights, (std::multiset<double>{share, (1.0 + std::log(3.0)) * share}));
  EXPECT_EQ(binary_weights, (std::multiset<double>{share, share}));
}

TEST(Features, FeaturesAreDistinctAndSortedByHash) {
  std::vector<Feature> features = extract_features(read_testdata("en_library.txt"), {}, 0);
  ASSERT_GT(features.size(), 100u);
  for (std::size_t i = 1; i < features.size(); ++i) {
    EXPECT_LT(features[i - 1].hash, features[i].hash);
  }
}

TEST(Features, HashIsXxh3OfTheLittleEndianTokenHashes) {
  // Pins the documented hash definition: changing it changes every stored fingerprint.
  FeaturesConfig config;
  config.ngram = 2;
  std::vector<Feature> features = extract_features("Ab c", config, 42);
  ASSERT_EQ(features.size(), 1u);
  std::uint64_t words[2] = {XXH3_64bits_withSeed("ab", 2, 42), XXH3_64bits_withSeed("c", 1, 42)};
  EXPECT_EQ(features[0].hash, XXH3_64bits_withSeed(words, sizeof words, 42));
}

TEST(Features, SeedChangesEveryHash) {
  std::vector<Feature> a = extract_features("the quick brown fox jumps", FeaturesConfig{}, 1);
  std::vector<Feature> b = extract_features("the quick brown fox jumps", FeaturesConfig{}, 2);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_FALSE(a.empty());
  for (const Feature& f : a) {
    EXPECT_TRUE(
        std::none_of(b.begin(), b.end(), [&](const Feature& g) { return g.hash == f.hash; }));
  }
}

TEST(Features, StopWordsAreDroppedOnlyWhenEnabled) {
  FeaturesConfig config;
  EXPECT_THAT(tokenize("The cat and the dog", config),
              ElementsAre("the", "cat", "and", "the", "dog"));
  config.stop_words = true;
  EXPECT_THAT(tokenize("The cat and the dog", config), ElementsAre("cat", "dog"));
  EXPECT_THAT(tokenize("Кот и собака", config), ElementsAre("кот", "собака"));
  EXPECT_FALSE(contains(tokenize("我们的城市", config), "的"));
}

TEST(Features, BuiltinStopWordsAreSingleNormalisedTokens) {
  // A stop word that is not its own nfkc_cf token could never match (Chinese and Japanese ones
  // are words of the dictionary path).
  for (std::string_view word : builtin_stop_words()) {
    EXPECT_THAT(tokenize(word, cjk_words()), ElementsAre(std::string(word))) << word;
    EXPECT_TRUE(is_stop_word(word)) << word;
  }
  EXPECT_FALSE(is_stop_word("library"));
}

TEST(Features, TextBeyondMaxTextBytesIsIgnored) {
  FeaturesConfig config = unigrams();
  config.max_text_bytes = 9;
  EXPECT_THAT(tokenize("alpha bet gamma", config), ElementsAre("alpha", "bet"));
  // A cut inside a multi-byte character drops that character, never produces U+FFFD garbage.
  config.max_text_bytes = 7;  // "мир" is 6 bytes, "ы" starts at byte 6.
  EXPECT_THAT(tokenize("мирыш", config), ElementsAre("мир"));
  config.max_text_bytes = 0;
  EXPECT_TRUE(extract_features("alpha", config, 0).empty());
}

TEST(Features, ThreadsGetTheSameFeatures) {
  const std::string text = read_testdata("zh_metro.txt");
  const std::vector<Feature> expected = extract_features(text, FeaturesConfig{}, 3);
  std::vector<std::vector<Feature>> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results) {
    threads.emplace_back([&] { result = extract_features(text, FeaturesConfig{}, 3); });
  }
  for (auto& t : threads) t.join();
  for (const auto& result : results) {
    ASSERT_EQ(result.size(), expected.size());
    for (std::size_t i = 0; i < result.size(); ++i) EXPECT_EQ(result[i].hash, expected[i].hash);
  }
}

// SimHash distances: what dedup.max_distance = 3 relies on, under the configured default,
// under token bigrams with tf weights (the measured recommendation) and with Han and kana
// split by ICU's dictionaries (features.cjk: words).

std::vector<FeaturesConfig> distance_configs() {
  FeaturesConfig bigram_tf;
  bigram_tf.ngram = 2;
  bigram_tf.weighting = Weighting::kTf;
  return {FeaturesConfig{}, bigram_tf, cjk_words()};
}

// Each edit of text lands within 3 bits at the median and max_distance at worst, under every
// configuration the distance tests cover.
void expect_edits_stay_close(const std::string& text, const std::vector<std::string>& edits,
                             int max_distance) {
  for (const FeaturesConfig& config : distance_configs()) {
    std::vector<int> distances;
    for (const std::string& edited : edits) distances.push_back(distance(text, edited, config));
    std::sort(distances.begin(), distances.end());
    EXPECT_LE(distances[distances.size() / 2], 3) << "median, ngram " << config.ngram;
    EXPECT_LE(distances.back(), max_distance) << "max, ngram " << config.ngram;
  }
}

TEST(FeatureDistance, UnrelatedChineseTextsAreFarApart) {
  for (const FeaturesConfig& config : distance_configs()) {
    EXPECT_GT(distance(read_testdata("zh_metro.txt"), read_testdata("zh_tea.txt"), config), 10)
        << "ngram " << config.ngram << " " << name_of(config.weighting);
  }
}

TEST(FeatureDistance, OneWordEditsInLongChineseTextStayClose) {
  // Each edit changes two or three shingles of several hundred; which of the 64 sums they tip
  // over is chance (here 0 to 4 bits), so the claim is about the set: typically within k = 3.
  const std::string text = read_testdata("zh_metro.txt");
  const std::vector<std::pair<std::string, std::string>> words = {{"严格落实", "严格执行"},
                                                                  {"轨道交通", "地铁交通"},
                                                                  {"火车站", "汽车站"},
                                                                  {"大学城", "科技城"},
                                                                  {"隔音", "降噪"}};
  for (const FeaturesConfig& config : distance_configs()) {
    std::vector<int> distances;
    for (const auto& [from, to] : words) {
      distances.push_back(distance(text, replace_once(text, from, to), config));
    }
    std::sort(distances.begin(), distances.end());
    EXPECT_LE(distances[distances.size() / 2], 3) << "median, ngram " << config.ngram;
    EXPECT_LE(distances.back(), 5) << "max, ngram " << config.ngram;
  }
}

TEST(FeatureDistance, OneCharacterEditsInLongChineseTextStayClose) {
  // Every 40th Han character in turn replaced by 某. A replaced character can split a
  // dictionary word, changing two or three tokens; SimHash then moves a few bits at random,
  // so the claim is about the distribution: typically within k = 3, never far.
  const std::string text = read_testdata("zh_metro.txt");
  std::vector<std::string> edits;
  for (std::size_t i = 0, han = 0; i + 3 <= text.size(); ++i) {
    const auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0xE4 || lead > 0xE9 || han++ % 40 != 0) continue;  // U+4000..U+9FFF
    std::string edited = text;
    edited.replace(i, 3, text.compare(i, 3, "某") == 0 ? "甲" : "某");
    edits.push_back(std::move(edited));
  }
  ASSERT_GE(edits.size(), 20u);
  expect_edits_stay_close(text, edits, /*max_distance=*/8);
}

TEST(FeatureDistance, UnrelatedEnglishTextsAreFarApart) {
  for (const FeaturesConfig& config : distance_configs()) {
    EXPECT_GT(distance(read_testdata("en_library.txt"), read_testdata("en_harvest.txt"), config),
              10)
        << "ngram " << config.ngram;
  }
}

TEST(FeatureDistance, OneWordEditInLongEnglishTextStaysClose) {
  const std::string text = read_testdata("en_library.txt");
  const std::string edited = replace_once(text, "heated discussion", "heated debate");
  for (const FeaturesConfig& config : distance_configs()) {
    EXPECT_LE(distance(text, edited, config), 3) << "ngram " << config.ngram;
  }
}

TEST(FeatureDistance, TyposInLongEnglishTextStayClose) {
  // In every 12th word of five or more letters in turn, the second and third letters swapped.
  const std::string text = read_testdata("en_library.txt");
  std::vector<std::string> edits;
  std::size_t words = 0;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t end = i;
    while (end < text.size() && std::islower(static_cast<unsigned char>(text[end]))) ++end;
    if (end - i >= 5 && words++ % 12 == 0) {
      std::string edited = text;
      std::swap(edited[i + 1], edited[i + 2]);
      edits.push_back(std::move(edited));
    }
    i = end + 1;
  }
  ASSERT_GE(edits.size(), 20u);
  expect_edits_stay_close(text, edits, /*max_distance=*/8);
}

TEST(FeatureDistance, TypographyAndCaseChangesDoNotMoveTheFingerprint) {
  const std::string text = read_testdata("en_library.txt");
  std::string shouted = text;
  std::transform(shouted.begin(), shouted.end(), shouted.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  EXPECT_EQ(distance(text, shouted), 0);
  EXPECT_EQ(distance(text, replace_once(text, "Tuesday evening", "Tuesday  evening --")), 0);
}

}  // namespace
}  // namespace neardup
