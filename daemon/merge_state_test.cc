#include "daemon/merge_state.h"

#include <gtest/gtest.h>

#include "store/test_util.h"

namespace neardup::daemon {
namespace {

SourcePosition at(std::int64_t offset, std::int32_t partition = 0) {
  return SourcePosition{"pages", partition, offset};
}

Verdict unique() { return Verdict{.status = Verdict::Status::kUnique}; }

DocumentsRecord decided(std::string id, const Verdict& verdict, const SourcePosition& source) {
  return DocumentsRecord{.id = std::move(id), .source = source, .verdict = verdict};
}

DocumentsRecord mark(const SourcePosition& source) {
  return DocumentsRecord{.mark = true, .source = source};
}

std::unique_ptr<MergeState> open(const std::string& dir, const std::string& topic = "documents") {
  auto state = MergeState::open(dir, topic);
  EXPECT_TRUE(state) << state.error();
  return state ? std::move(*state) : nullptr;
}

TEST(MergeState, WhatWasReadIsKeptAndReadOnFromWhereItStopped) {
  testing::TempDir dir;
  {
    auto state = open(dir.path());
    EXPECT_EQ(state->next(3), 0);
    Verdict copy{.status = Verdict::Status::kDuplicate, .matched = "a", .duplicate_of = "a"};
    state->read(3, 10, decided("a", unique(), at(1)));
    state->read(3, 11, decided("b", copy, at(2)));
    state->read(1, 4, mark(at(2)));
    state->reached(1, 7);  // the partition's end, past its last record
    // Found before it is written, and after.
    EXPECT_EQ(state->find("b")->verdict.duplicate_of, "a");
    ASSERT_TRUE(state->flush());
    EXPECT_EQ(state->find("b")->source, at(2));
    EXPECT_EQ(state->stored(), 2u);
  }
  auto state = open(dir.path());
  EXPECT_EQ(state->path(), dir.path() + "/merge-0");
  EXPECT_EQ(state->next(3), 12);
  EXPECT_EQ(state->next(1), 7);
  EXPECT_EQ(state->next(0), 0);
  EXPECT_EQ(state->find("a")->verdict.status, Verdict::Status::kUnique);
  EXPECT_EQ(state->find("b")->verdict.matched, "a");
  EXPECT_FALSE(state->find("c"));
  ASSERT_EQ(state->marks().size(), 1u);
  EXPECT_EQ(state->marks().begin()->second, 2);
}

TEST(MergeState, ItsOwnDecisionsAreNeverWrittenUntilReadBack) {
  testing::TempDir dir;
  {
    auto state = open(dir.path());
    state->decide("a", unique(), at(5));
    state->read(0, 0, decided("x", unique(), at(1)));
    EXPECT_TRUE(state->find("a"));  // merged by it, before its transaction commits
    ASSERT_TRUE(state->flush());
  }
  {
    auto state = open(dir.path());
    EXPECT_FALSE(state->find("a"));  // its transaction may have been aborted
    EXPECT_TRUE(state->find("x"));
    // A newer decision of this stage goes before an older one read.
    state->decide(
        "x", Verdict{.status = Verdict::Status::kDuplicate, .matched = "y", .duplicate_of = "y"},
        at(9));
    EXPECT_EQ(state->find("x")->source, at(9));
    state->read(0, 1, decided("x", unique(), at(9)));  // read back: the topic's from now on
    ASSERT_TRUE(state->flush());
  }
  auto state = open(dir.path());
  EXPECT_EQ(state->find("x")->source, at(9));
}

TEST(MergeState, EachRunningStageHasASlotOfItsOwn) {
  testing::TempDir dir;
  auto first = open(dir.path());
  auto second = open(dir.path());
  EXPECT_EQ(first->path(), dir.path() + "/merge-0");
  EXPECT_EQ(second->path(), dir.path() + "/merge-1");
  first.reset();
  EXPECT_EQ(open(dir.path())->path(), dir.path() + "/merge-0");  // free again
}

TEST(MergeState, AnotherTopicsViewIsEmptiedAndSoIsAClearedOne) {
  testing::TempDir dir;
  {
    auto state = open(dir.path());
    state->read(0, 0, decided("a", unique(), at(1)));
    state->read(0, 1, mark(at(1)));
    ASSERT_TRUE(state->flush());
  }
  {
    auto state = open(dir.path(), "documents-3");
    EXPECT_FALSE(state->find("a"));
    EXPECT_TRUE(state->marks().empty());
    EXPECT_EQ(state->next(0), 0);
    state->read(0, 0, decided("b", unique(), at(1)));
    ASSERT_TRUE(state->flush());
    ASSERT_TRUE(state->clear());
    EXPECT_FALSE(state->find("b"));
    EXPECT_EQ(state->next(0), 0);
  }
  auto state = open(dir.path(), "documents-3");
  EXPECT_FALSE(state->find("b"));
  EXPECT_EQ(state->stored(), 0u);
}

TEST(MergeState, RecordsKeptWhileWaitingComeBackWhole) {
  testing::TempDir dir;
  ConsumedRecord record{.partition = {"candidates", 2},
                        .offset = 41,
                        .timestamp_ms = 1700000000123,
                        .key = std::string("k\0y", 3),
                        .headers = {{"neardup-source", "pages/2/7"}, {"empty", ""}},
                        .value = std::string(5000, 'v')};
  {
    auto state = open(dir.path());
    ASSERT_TRUE(state->keep("candidates/2/41", encode_consumed(record)));
    EXPECT_EQ(state->kept(), 1u);
    auto bytes = state->take("candidates/2/41");
    ASSERT_TRUE(bytes) << bytes.error();
    auto back = decode_consumed(*bytes);
    ASSERT_TRUE(back) << back.error();
    EXPECT_EQ(back->partition, record.partition);
    EXPECT_EQ(back->offset, 41);
    EXPECT_EQ(back->timestamp_ms, record.timestamp_ms);
    EXPECT_EQ(back->key, record.key);
    EXPECT_EQ(back->headers, record.headers);
    EXPECT_EQ(back->value, record.value);
    EXPECT_FALSE(state->take("candidates/2/41"));  // taken once
    record.key.reset();
    EXPECT_FALSE(decode_consumed(encode_consumed(record))->key);
    EXPECT_FALSE(decode_consumed(encode_consumed(record).substr(0, 30)));
    ASSERT_TRUE(state->keep("candidates/2/42", encode_consumed(record)));
  }
  // Emptied at the next open: Kafka holds those records.
  EXPECT_FALSE(open(dir.path())->take("candidates/2/42"));
}

// A decided record that cannot be read is no "not decided": the lookup answers nothing and the
// failure, naming the page and the directory, stays.
TEST(MergeState, AFailedLookupIsKeptAsAFailure) {
  testing::TempDir dir;
  {
    auto state = open(dir.path());
    state->read(0, 0, decided("a", unique(), at(1)));
    ASSERT_TRUE(state->flush());
  }
  {
    auto env = lmdb::Env::open(dir.path() + "/merge-0", {.map_size = 1ull << 30, .max_dbs = 8});
    ASSERT_TRUE(env);
    auto txn = lmdb::Txn::begin(*env, 0);
    auto db = lmdb::Dbi::open(*txn, "decided", 0);
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->put(*txn, "b", "not a documents record"));
    ASSERT_TRUE(txn->commit());
  }
  auto state = open(dir.path());
  EXPECT_TRUE(state->find("a"));
  EXPECT_FALSE(state->find("c"));  // not decided: no failure
  EXPECT_EQ(state->failure(), "");
  EXPECT_FALSE(state->find("b"));
  EXPECT_NE(state->failure().find("merge-0: looking up b: "), std::string::npos)
      << state->failure();
  EXPECT_TRUE(state->find("a"));
  EXPECT_NE(state->failure(), "");  // kept
}

}  // namespace
}  // namespace neardup::daemon
