#include "daemon/offset_tracker.h"

#include <gtest/gtest.h>

namespace neardup::daemon {
namespace {

const PartitionId kP0{"pages", 0};

TEST(OffsetTracker, CommittableStopsAtTheLowestUndeliveredOffset) {
  OffsetTracker tracker;
  for (std::int64_t offset : {10, 11, 12, 13}) tracker.consumed(kP0, offset);
  tracker.delivered(kP0, 10);
  tracker.delivered(kP0, 12);
  EXPECT_EQ(tracker.committable(kP0), 11);
  tracker.delivered(kP0, 11);
  EXPECT_EQ(tracker.committable(kP0), 13);
  tracker.delivered(kP0, 13);
  EXPECT_EQ(tracker.committable(kP0), 14);
  EXPECT_EQ(tracker.outstanding(kP0), 0u);
}

TEST(OffsetTracker, GapsInOffsetsDoNotHoldBackTheCommit) {
  OffsetTracker tracker;
  tracker.consumed(kP0, 5);
  tracker.consumed(kP0, 9);  // 6..8 were compacted away
  tracker.delivered(kP0, 5);
  tracker.delivered(kP0, 9);
  EXPECT_EQ(tracker.committable(kP0), 10);
}

TEST(OffsetTracker, AForgottenPartitionIgnoresLateDeliveries) {
  OffsetTracker tracker;
  tracker.consumed(kP0, 1);
  tracker.forget(kP0);
  tracker.delivered(kP0, 1);
  EXPECT_EQ(tracker.committable(kP0), std::nullopt);
  EXPECT_EQ(tracker.outstanding_total(), 0u);
}

TEST(OffsetTracker, PartitionsAreIndependent) {
  OffsetTracker tracker;
  const PartitionId p1{"pages", 1};
  tracker.consumed(kP0, 0);
  tracker.consumed(p1, 0);
  tracker.delivered(p1, 0);
  EXPECT_EQ(tracker.committable(kP0), 0);
  EXPECT_EQ(tracker.committable(p1), 1);
  EXPECT_EQ(partition_key(p1), "pages/1");
}

}  // namespace
}  // namespace neardup::daemon
