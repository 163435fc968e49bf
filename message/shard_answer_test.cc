#include "message/shard_answer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "store/test_util.h"

namespace neardup {
namespace {

using namespace neardup::testing;
using ::testing::HasSubstr;

TEST(ShardAnswer, RoundTripsEveryField) {
  ShardAnswer answer{.shard = 2,
                     .shards = 3,
                     .source_topic = "pages",
                     .source_partition = 7,
                     .source_offset = 1234567890123,
                     .fingerprinted = std::string("NDFP\0x", 6)};
  answer.verdict.status = Verdict::Status::kDuplicate;
  answer.verdict.matched = "https://example.com/a";
  answer.verdict.distance = 3;
  answer.verdict.method = Verdict::kBoth;
  answer.verdict.similarity = 0.8125;
  answer.verdict.replayed = true;
  auto back = decode_shard_answer(encode_shard_answer(answer));
  ASSERT_TRUE(back.has_value()) << back.error();
  EXPECT_EQ(back->shard, 2u);
  EXPECT_EQ(back->shards, 3u);
  EXPECT_EQ(back->source_topic, "pages");
  EXPECT_EQ(back->source_partition, 7);
  EXPECT_EQ(back->source_offset, 1234567890123);
  EXPECT_EQ(back->verdict.status, Verdict::Status::kDuplicate);
  EXPECT_EQ(back->verdict.matched, "https://example.com/a");
  EXPECT_EQ(back->verdict.distance, 3);
  EXPECT_EQ(back->verdict.method, Verdict::kBoth);
  EXPECT_EQ(back->verdict.similarity, 0.8125);
  EXPECT_TRUE(back->verdict.replayed);
  EXPECT_EQ(back->fingerprinted, answer.fingerprinted);

  answer.verdict = Verdict{.status = Verdict::Status::kSkipped, .reason = "too_short"};
  back = decode_shard_answer(encode_shard_answer(answer));
  ASSERT_TRUE(back.has_value()) << back.error();
  EXPECT_EQ(back->verdict.status, Verdict::Status::kSkipped);
  EXPECT_EQ(back->verdict.reason, "too_short");
}

TEST(ShardAnswer, RefusesWhatIsNotOne) {
  const std::string bytes = encode_shard_answer(ShardAnswer{.shards = 2});
  EXPECT_THAT(decode_shard_answer("NDFP").error(), HasSubstr("no NDSA magic"));
  EXPECT_THAT(decode_shard_answer(bytes.substr(0, bytes.size() - 1)).error(),
              HasSubstr("truncated"));
  std::string newer = bytes;
  newer[4] = 2;
  EXPECT_THAT(decode_shard_answer(newer).error(), HasSubstr("version 2, this reader knows 1"));
  EXPECT_THAT(
      decode_shard_answer(encode_shard_answer(ShardAnswer{.shard = 2, .shards = 2})).error(),
      HasSubstr("from shard 2 of 2"));
}

// Where the n-th page of one partition was read.
SourcePosition at(std::int64_t n) { return SourcePosition{"pages", 0, n}; }

ShardAnswer answer_of(std::uint32_t shard, Verdict v) {
  return ShardAnswer{.shard = shard, .shards = 3, .verdict = std::move(v)};
}

Verdict match(std::string id, int distance, std::uint8_t method, double similarity) {
  return Verdict{.status = Verdict::Status::kDuplicate,
                 .matched = std::move(id),
                 .distance = distance,
                 .method = method,
                 .similarity = similarity};
}

TEST(MergeAnswers, TakesTheBestDecidedMatchByTheIndexsRule) {
  Decisions decisions;
  decisions.record("a", Verdict{}, at(1));
  decisions.record("b", Verdict{}, at(2));
  Verdict c = match("a", 1, Verdict::kSimHash, 0.9);
  c.duplicate_of = "a";
  decisions.record("c", c, at(3));
  const std::vector<ShardAnswer> answers = {
      answer_of(0, match("b", 2, Verdict::kSimHash, 0.5)),
      answer_of(1, match("c", 2, Verdict::kSimHash, 0.7)),  // as near, decided later
      answer_of(2, match("b", 9, Verdict::kMinHash, 0.95)),
  };
  Verdict v = merge_answers("d", answers, decisions);
  EXPECT_EQ(v.status, Verdict::Status::kDuplicate);
  EXPECT_EQ(v.matched, "b");
  EXPECT_EQ(v.duplicate_of, "b");
  EXPECT_EQ(v.distance, 2);
  EXPECT_EQ(v.method, Verdict::kBoth);
  EXPECT_EQ(v.similarity, 0.5);

  // Nearer wins whatever the order; its root is its cluster's.
  v = merge_answers("d",
                    std::vector{answer_of(0, match("b", 2, Verdict::kSimHash, 0.5)),
                                answer_of(1, match("c", 1, Verdict::kSimHash, 0.7))},
                    decisions);
  EXPECT_EQ(v.matched, "c");
  EXPECT_EQ(v.duplicate_of, "a");
  EXPECT_EQ(v.method, Verdict::kSimHash);

  // MinHash alone: the most similar.
  v = merge_answers("d",
                    std::vector{answer_of(0, match("a", 20, Verdict::kMinHash, 0.6)),
                                answer_of(1, match("c", 12, Verdict::kMinHash, 0.7))},
                    decisions);
  EXPECT_EQ(v.matched, "c");
  EXPECT_EQ(v.distance, 12);
  EXPECT_EQ(v.method, Verdict::kMinHash);
}

TEST(MergeAnswers, PassesOverMatchesNotYetDecided) {
  Decisions decisions;
  decisions.record("a", Verdict{}, at(1));
  Verdict v = merge_answers("d",
                            std::vector{answer_of(0, match("x", 0, Verdict::kSimHash, 1)),
                                        answer_of(1, match("a", 3, Verdict::kSimHash, 0.5))},
                            decisions);
  EXPECT_EQ(v.matched, "a");
  v = merge_answers("d", std::vector{answer_of(0, match("x", 0, Verdict::kSimHash, 1))}, decisions);
  EXPECT_EQ(v.status, Verdict::Status::kUnique);
}

TEST(MergeAnswers, AnswersAPageSeenAgainWithItsDecidedVerdict) {
  Decisions decisions;
  decisions.record("a", Verdict{}, at(1));
  decisions.record("b", Verdict{}, at(2));
  Verdict first = match("a", 1, Verdict::kSimHash, -1);
  first.duplicate_of = "a";
  decisions.record("c", first, at(3));
  // A shard's own stored verdict of "c" names what it found then (here "b"): the merge's is
  // the one the page got.
  Verdict stored = match("b", 2, Verdict::kSimHash, -1);
  stored.replayed = true;
  const Verdict v =
      merge_answers("c", std::vector{answer_of(0, stored), answer_of(1, stored)}, decisions);
  EXPECT_TRUE(v.replayed);
  EXPECT_EQ(v.matched, "a");
  EXPECT_EQ(v.duplicate_of, "a");
  // Replays are not decisions: "c" keeps its place.
  decisions.record("c", v, at(4));
  EXPECT_EQ(decisions.find("c")->source, at(3));
  // Skipped records pass through.
  const Verdict skipped{.status = Verdict::Status::kSkipped, .reason = "empty"};
  EXPECT_EQ(merge_answers("e", std::vector{answer_of(0, skipped), answer_of(1, skipped)}, decisions)
                .reason,
            "empty");
}

TEST(DocumentsRecords, RoundTripAPagesDecisionAndAMark) {
  Verdict verdict = match("https://a.example/1", 2, Verdict::kBoth, 0.75);
  verdict.duplicate_of = "https://a.example/0";
  const SourcePosition source{"pages", 3, 1234};
  auto [key, value] = encode_decided("https://a.example/2", source, verdict);
  EXPECT_EQ(key, "https://a.example/2");
  auto back = decode_documents_record(key, value);
  ASSERT_TRUE(back.has_value()) << back.error();
  EXPECT_FALSE(back->mark);
  EXPECT_EQ(back->id, "https://a.example/2");
  EXPECT_EQ(back->source, source);
  EXPECT_EQ(back->verdict.status, Verdict::Status::kDuplicate);
  EXPECT_EQ(back->verdict.matched, "https://a.example/1");
  EXPECT_EQ(back->verdict.duplicate_of, "https://a.example/0");
  EXPECT_EQ(back->verdict.distance, 2);
  EXPECT_EQ(back->verdict.method, Verdict::kBoth);
  EXPECT_EQ(back->verdict.similarity, 0.75);

  auto [mark_key, mark_value] = encode_mark(source);
  EXPECT_EQ(mark_key[0], '\0');  // never a page id of a page read from JSON text
  back = decode_documents_record(mark_key, mark_value);
  ASSERT_TRUE(back.has_value()) << back.error();
  EXPECT_TRUE(back->mark);
  EXPECT_EQ(back->source, source);

  EXPECT_THAT(decode_documents_record("x", "NDXX").error(), HasSubstr("not a documents record"));
  EXPECT_THAT(decode_documents_record(key, value.substr(0, value.size() - 2)).error(),
              HasSubstr("truncated"));
}

TEST(Decisions, TiesGoToTheEarliestReadThenToTheLowerPartition) {
  Decisions decisions;
  decisions.record("x", Verdict{}, SourcePosition{"pages", 1, 5});
  decisions.record("y", Verdict{}, SourcePosition{"pages", 0, 9});
  decisions.record("z", Verdict{}, SourcePosition{"pages", 1, 2});
  const auto tied = [&](const char* first, const char* second) {
    return merge_answers("p",
                         std::vector{answer_of(0, match(first, 1, Verdict::kSimHash, 0.5)),
                                     answer_of(1, match(second, 1, Verdict::kSimHash, 0.5))},
                         decisions)
        .matched;
  };
  EXPECT_EQ(tied("x", "z"), "z");  // one partition: the earlier
  EXPECT_EQ(tied("z", "x"), "z");
  EXPECT_EQ(tied("x", "y"), "y");  // two: the lower partition
  // A re-crawl moves the id to where it was read again.
  decisions.record("z", Verdict{}, SourcePosition{"pages", 1, 8});
  EXPECT_EQ(tied("x", "z"), "x");
  EXPECT_EQ(decisions.size(), 3u);
}

// Pages with both signatures: near and exact copies, copies found by one signature only,
// re-crawls of an id with new signatures, and the same page sent again.
std::vector<IndexItem> crawl(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<IndexItem> items;
  std::vector<std::pair<std::uint64_t, Sketch>> seen;
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t roll = rng() % 100;
    std::uint64_t fp = rng();
    Sketch sketch = random_sketch(rng());
    std::string id = numbered("https://example.com/", i);
    if (!seen.empty() && roll < 45) {
      const auto& [from_fp, from_sketch] = seen[rng() % seen.size()];
      fp = from_fp;
      for (std::uint64_t flips = rng() % 6; flips > 0; --flips) fp ^= 1ull << (rng() % 64);
      sketch = roll < 35 ? changed(from_sketch, 2 + rng() % 6, static_cast<std::uint16_t>(i))
                         : from_sketch;
      if (roll >= 40) fp = rng();  // found by its sketch alone
    } else if (items.size() > 10 && roll < 50) {
      IndexItem again = items[items.size() - 1 - rng() % 10];  // sent again
      items.push_back(std::move(again));
      continue;
    } else if (items.size() > 10 && roll < 53) {
      id = items[rng() % items.size()].page->id;  // re-crawled, new signatures
    }
    seen.emplace_back(fp, sketch);
    items.push_back(sketched(std::move(id), fp, std::move(sketch)));
  }
  return items;
}

std::vector<Verdict> apply_in_batches(Index& index, const std::vector<IndexItem>& items) {
  std::vector<Verdict> out;
  for (std::size_t i = 0; i < items.size(); i += 97) {
    const std::size_t end = std::min(items.size(), i + 97);
    auto batch = apply_or_die(index, std::vector(items.begin() + i, items.begin() + end));
    out.insert(out.end(), batch.begin(), batch.end());
  }
  return out;
}

// The claim the split rests on: S shards' answers, merged, are the whole index's verdicts.
TEST(MergeAnswers, ShardsMergedGiveTheWholeIndexsVerdicts) {
  const std::vector<IndexItem> items = crawl(4000, 7);
  const TempDir dir;
  auto whole = open_or_die(store_config(dir.path() + "/whole"));
  ASSERT_NE(whole, nullptr);
  const std::vector<Verdict> expected = apply_in_batches(*whole, items);
  std::size_t duplicates = 0, minhash_only = 0, replayed = 0;
  for (const Verdict& v : expected) {
    duplicates += v.status == Verdict::Status::kDuplicate;
    minhash_only += v.method == Verdict::kMinHash;
    replayed += v.replayed;
  }
  EXPECT_GT(duplicates, 1000u);
  EXPECT_GT(minhash_only, 100u);
  EXPECT_GT(replayed, 50u);

  for (std::uint32_t shards : {1u, 2u, 3u, 5u}) {
    std::vector<std::vector<Verdict>> answered;
    for (std::uint32_t j = 0; j < shards; ++j) {
      StoreConfig config = store_config(dir.path() + numbered("/of", shards) + numbered("-", j));
      config.shards = shards;
      config.shard = j;
      auto shard = open_or_die(config);
      ASSERT_NE(shard, nullptr);
      answered.push_back(apply_in_batches(*shard, items));
      EXPECT_EQ(shard->stats().shards, shards);
    }
    Decisions decisions;
    std::size_t differ = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
      std::vector<ShardAnswer> answers;
      for (std::uint32_t j = 0; j < shards; ++j) {
        answers.push_back(ShardAnswer{.shard = j, .shards = shards, .verdict = answered[j][i]});
      }
      const std::string& id = items[i].page->id;
      const Verdict v = merge_answers(id, answers, decisions);
      decisions.record(id, v, at(static_cast<std::int64_t>(i)));
      const Verdict& want = expected[i];
      const bool same = v.status == want.status && v.matched == want.matched &&
                        v.duplicate_of == want.duplicate_of && v.distance == want.distance &&
                        v.method == want.method && v.similarity == want.similarity &&
                        v.replayed == want.replayed;
      if (!same && ++differ <= 5) {
        ADD_FAILURE() << shards << " shards, page " << i << " (" << id << "): merged "
                      << status_name(v.status) << " " << v.matched << " of " << v.duplicate_of
                      << " d=" << v.distance << " m=" << int(v.method) << " s=" << v.similarity
                      << " r=" << v.replayed << "; whole " << status_name(want.status) << " "
                      << want.matched << " of " << want.duplicate_of << " d=" << want.distance
                      << " m=" << int(want.method) << " s=" << want.similarity
                      << " r=" << want.replayed;
      }
    }
    EXPECT_EQ(differ, 0u) << shards << " shards";
  }
}

TEST(ShardStore, RefusesToBeOpenedAsAnotherShardOrAsTheWhole) {
  const TempDir dir;
  StoreConfig config = store_config(dir.path() + "/s1");
  config.shards = 3;
  config.shard = 1;
  ASSERT_NE(open_or_die(config), nullptr);
  config.shard = 2;
  auto other = Index::open(config);
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.error().code, StoreError::Code::kDesign);
  EXPECT_THAT(other.error().message,
              HasSubstr("holds shard 1 of 3 of the index, but the config asks for shard 2 of 3"));
  config.shards = 1;
  config.shard = 0;
  auto whole = Index::open(config);
  ASSERT_FALSE(whole.has_value());
  EXPECT_THAT(whole.error().message, HasSubstr("but the config asks for the whole"));
  // Read-only, it is what it is.
  auto read = Index::open(config, OpenOptions{.read_only = true});
  ASSERT_TRUE(read.has_value()) << read.error();
  EXPECT_EQ((*read)->stats().shard, 1u);
  EXPECT_EQ((*read)->stats().shards, 3u);
}

}  // namespace
}  // namespace neardup
