#include "daemon/in_flight.h"

#include <gtest/gtest.h>

namespace neardup::daemon {
namespace {

TEST(InFlight, CountsRecordsAndBytesUntilDelivered) {
  InFlight in_flight(1000);
  in_flight.add(300);
  in_flight.add(200);
  EXPECT_EQ(in_flight.records(), 2u);
  EXPECT_EQ(in_flight.bytes(), 500u);
  in_flight.remove(300);
  EXPECT_EQ(in_flight.records(), 1u);
  EXPECT_EQ(in_flight.bytes(), 200u);
}

TEST(InFlight, PausesAtEitherBoundAndResumesAtThreeQuartersOfBoth) {
  InFlight in_flight(1000);
  for (int i = 0; i < 3; ++i) in_flight.add(10);
  EXPECT_FALSE(in_flight.over(4));
  in_flight.add(10);
  EXPECT_TRUE(in_flight.over(4));  // 4 records of 4
  EXPECT_FALSE(in_flight.under(4));
  in_flight.remove(10);
  EXPECT_TRUE(in_flight.under(4));  // 3 records, 3/4 of 4

  InFlight bytes(1000);
  bytes.add(1000);
  EXPECT_TRUE(bytes.over(100));  // one record, but every byte
  bytes.add(1);
  bytes.remove(1000);
  EXPECT_TRUE(bytes.under(100));
}

TEST(InFlight, BetweenTheBoundsNeitherPausesNorResumes) {
  InFlight in_flight(1000);
  in_flight.add(800);  // over 3/4 of the bytes, under all of them
  EXPECT_FALSE(in_flight.over(10));
  EXPECT_FALSE(in_flight.under(10));
}

}  // namespace
}  // namespace neardup::daemon
