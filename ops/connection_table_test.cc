#include "ops/connection_table.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace neardup::ops {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = ConnectionTable::Clock;

ConnectionTable small_table() {
  return ConnectionTable({.max_connections = 6,
                          .max_per_client = 3,
                          .head_time = seconds(5),
                          .min_body_rate = 1000});
}

const Clock::time_point t0{};

TEST(ConnectionTable, AClientPastItsShareClosesItsLongestWaitingConnection) {
  ConnectionTable table = small_table();
  EXPECT_FALSE(table.opened(1, "a", t0));
  EXPECT_FALSE(table.opened(2, "a", t0));
  EXPECT_FALSE(table.opened(3, "a", t0));
  EXPECT_FALSE(table.opened(10, "b", t0));
  EXPECT_EQ(table.opened(4, "a", t0), 1);
  EXPECT_EQ(table.size("a"), 3u);
  table.head_received(2, 0, t0);  // busy: passed over
  EXPECT_EQ(table.opened(5, "a", t0), 3);
  EXPECT_EQ(table.size(), 4u);
  EXPECT_EQ(table.size("b"), 1u);
}

TEST(ConnectionTable, AConnectionWaitingAgainAfterARequestWaitsFromItsEnd) {
  ConnectionTable table = small_table();
  table.opened(1, "a", t0);
  table.opened(2, "a", t0);
  table.opened(3, "a", t0);
  table.head_received(1, 0, t0);
  table.answering(1);
  table.request_ended(1, t0 + seconds(1));  // keep-alive: now the newest waiting
  EXPECT_EQ(table.opened(4, "a", t0 + seconds(1)), 2);
}

TEST(ConnectionTable, PastTheTotalTheClientWithTheMostGivesOneUp) {
  ConnectionTable table = small_table();
  table.opened(1, "b", t0);
  table.opened(2, "a", t0);
  table.opened(3, "a", t0);
  table.opened(4, "a", t0);
  table.opened(5, "c", t0);
  table.opened(6, "c", t0);
  EXPECT_EQ(table.opened(7, "d", t0), 2);  // a holds the most; 2 waited longest of a's
  EXPECT_EQ(table.size(), 6u);
  EXPECT_EQ(table.size("a"), 2u);
  EXPECT_EQ(table.size("d"), 1u);
}

TEST(ConnectionTable, WhenEveryConnectionIsBusyTheNewOneIsClosed) {
  ConnectionTable table = small_table();
  for (int key = 1; key <= 3; ++key) {
    table.opened(key, "a", t0);
    table.head_received(key, 100, t0);
  }
  EXPECT_EQ(table.opened(4, "a", t0), 4);
  EXPECT_EQ(table.size("a"), 3u);
  table.closed(4);
  table.closed(2);  // a busy one ends: room again
  EXPECT_FALSE(table.opened(4, "a", t0));
}

TEST(ConnectionTable, HeadsAndBodiesPastTheirDeadlineExpireOnce) {
  ConnectionTable table = small_table();
  table.opened(1, "a", t0);                      // head due at 5 s
  table.opened(2, "a", t0);
  table.head_received(2, 3000, t0 + seconds(1));  // body due at 1 + 5 + 3000 B / 1000 B/s = 9 s
  table.opened(3, "b", t0);
  table.head_received(3, 0, t0);
  table.answering(3);  // no deadline
  EXPECT_TRUE(table.expired(t0 + milliseconds(4999)).empty());
  EXPECT_EQ(table.expired(t0 + seconds(5)), std::vector<int>{1});
  EXPECT_TRUE(table.expired(t0 + seconds(6)).empty());  // returned once
  EXPECT_TRUE(table.expired(t0 + milliseconds(8999)).empty());
  EXPECT_EQ(table.expired(t0 + seconds(9)), std::vector<int>{2});
  EXPECT_TRUE(table.expired(t0 + seconds(3600)).empty());
  EXPECT_EQ(table.size(), 1u);
  table.closed(1);
  table.closed(2);
  table.closed(3);
  EXPECT_EQ(table.size(), 0u);
}

TEST(ConnectionTable, ConnectionsBeingClosedAreNotClosedAgainNorCounted) {
  ConnectionTable table = small_table();
  table.opened(1, "a", t0);
  table.opened(2, "a", t0);
  table.opened(3, "a", t0);
  EXPECT_EQ(table.opened(4, "a", t0), 1);
  EXPECT_EQ(table.opened(5, "a", t0), 2);  // not 1 again
  table.head_received(1, 0, t0);           // too late for 1: ignored
  EXPECT_EQ(table.expired(t0 + seconds(10)), (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.held(), 5u);  // until they are closed
  for (int key = 1; key <= 5; ++key) table.closed(key);
  EXPECT_EQ(table.held(), 0u);
}

}  // namespace
}  // namespace neardup::ops
