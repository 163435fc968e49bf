#include "daemon/lanes.h"

#include <gtest/gtest.h>

#include <thread>

namespace neardup::daemon {
namespace {

using std::chrono::milliseconds;

WorkPtr work(const std::string& topic, std::int32_t partition, std::int64_t offset) {
  return std::make_shared<Work>(ConsumedRecord{.partition = {topic, partition}, .offset = offset});
}

std::vector<std::int64_t> offsets(const std::vector<WorkPtr>& batch) {
  std::vector<std::int64_t> result;
  for (const WorkPtr& w : batch) result.push_back(w->input.offset);
  return result;
}

TEST(Lanes, OnlyTheReadyPrefixOfAPartitionIsTaken) {
  Lanes lanes;
  auto a = work("p", 0, 10), b = work("p", 0, 11), c = work("p", 0, 12);
  lanes.append(a);
  lanes.append(b);
  lanes.append(c);
  lanes.mark_ready(*a);
  lanes.mark_ready(*c);  // finished before b: must wait for it
  EXPECT_EQ(offsets(lanes.take(10, milliseconds(0), milliseconds(0))),
            (std::vector<std::int64_t>{10}));
  EXPECT_TRUE(lanes.take(10, milliseconds(0), milliseconds(0)).empty());
  lanes.mark_ready(*b);
  EXPECT_EQ(offsets(lanes.take(10, milliseconds(0), milliseconds(0))),
            (std::vector<std::int64_t>{11, 12}));
  EXPECT_EQ(lanes.size(), 0u);
}

TEST(Lanes, ASlowRecordHoldsUpItsOwnPartitionOnly) {
  Lanes lanes;
  auto slow = work("p", 0, 0), later = work("p", 0, 1), other = work("p", 1, 0);
  for (const auto& w : {slow, later, other}) lanes.append(w);
  lanes.mark_ready(*later);
  lanes.mark_ready(*other);
  auto batch = lanes.take(10, milliseconds(0), milliseconds(0));
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0], other);
  EXPECT_EQ(lanes.size(), 2u);
}

TEST(Lanes, ABatchHoldsAtMostBatchSizeRecords) {
  Lanes lanes;
  std::vector<WorkPtr> all;
  for (int i = 0; i < 5; ++i) {
    all.push_back(work("p", 0, i));
    lanes.append(all.back());
  }
  for (const auto& w : all) lanes.mark_ready(*w);
  EXPECT_EQ(offsets(lanes.take(3, milliseconds(0), milliseconds(0))),
            (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(offsets(lanes.take(3, milliseconds(0), milliseconds(0))),
            (std::vector<std::int64_t>{3, 4}));
}

TEST(Lanes, TakeWaitsForARecordAndReturnsOnWake) {
  Lanes lanes;
  auto a = work("p", 0, 0);
  lanes.append(a);
  std::jthread worker([&] {
    std::this_thread::sleep_for(milliseconds(50));
    lanes.mark_ready(*a);
  });
  EXPECT_EQ(lanes.take(1, milliseconds(5000), milliseconds(0)).size(), 1u);

  std::jthread waker([&] {
    std::this_thread::sleep_for(milliseconds(50));
    lanes.wake();
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(lanes.take(1, milliseconds(5000), milliseconds(0)).empty());
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(4000));
}

TEST(Lanes, AfterStopTakeDoesNotWait) {
  Lanes lanes;
  lanes.stop();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(lanes.take(1, milliseconds(5000), milliseconds(5000)).empty());
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(4000));
}

}  // namespace
}  // namespace neardup::daemon
