#include <gtest/gtest.h>
#include <unistd.h>

#include "daemon/clients.h"
#include "daemon/daemon.h"
#include "daemon/fingerprinted_stage.h"
#include "daemon/role.h"
#include "ops/reload.h"

namespace neardup::daemon {
namespace {

std::string property(const kafka::Properties& properties, const std::string& name) {
  std::string value = "<none>";
  for (const auto& [n, v] : properties) {
    if (n == name) value = v;  // the last one wins, as librdkafka applies them
  }
  return value;
}

TEST(Roles, NamesParseBack) {
  for (Role role : {Role::kSingle, Role::kFingerprint, Role::kIndex, Role::kShard, Role::kMerge}) {
    EXPECT_EQ(parse_role(role_name(role)), role);
  }
  EXPECT_FALSE(parse_role("worker"));
}

TEST(Roles, EachRoleConsumesItsTopicInItsGroup) {
  Config config;
  config.kafka.group_id = "crawl";
  EXPECT_EQ(consumed_topic(config, Role::kSingle), config.kafka.input_topic);
  EXPECT_EQ(consumed_topic(config, Role::kFingerprint), config.kafka.input_topic);
  EXPECT_EQ(consumed_topic(config, Role::kIndex), config.kafka.fingerprint_topic);
  EXPECT_EQ(property(*consumer_properties(config, Role::kSingle), "group.id"), "crawl");
  EXPECT_EQ(property(*consumer_properties(config, Role::kFingerprint), "group.id"), "crawl");
  EXPECT_EQ(property(*consumer_properties(config, Role::kIndex), "group.id"), "crawl-index");
  // Each shard reads every fingerprinted page in a group of its own; the merge stages share one.
  config.store.shards = 3;
  config.store.shard = 2;
  EXPECT_EQ(consumed_topic(config, Role::kShard), config.kafka.fingerprint_topic);
  EXPECT_EQ(consumed_topic(config, Role::kMerge), config.kafka.candidates_topic);
  EXPECT_EQ(property(*consumer_properties(config, Role::kShard), "group.id"),
            "crawl-pages-candidates-shard-2");
  EXPECT_EQ(property(*consumer_properties(config, Role::kMerge), "group.id"),
            "crawl-pages-candidates-merge");
  // A standby replica of the shard reads them in a group of its own beside the primary's.
  config.store.replica = true;
  EXPECT_EQ(property(*consumer_properties(config, Role::kShard), "group.id"),
            "crawl-pages-candidates-shard-2-replica");
}

TEST(Roles, AShardHasOneTransactionalIdAndAMergeStageOneOfItsOwn) {
  Config config;
  config.kafka.group_id = "crawl";
  config.kafka.exactly_once = true;
  config.store.shards = 3;
  config.store.shard = 1;
  EXPECT_EQ(property(*producer_properties(config, Role::kShard), "transactional.id"),
            "neardupd-crawl-pages-candidates-shard-1");
  config.store.replica = true;  // its replica neither fences it nor is fenced by it
  EXPECT_EQ(property(*producer_properties(config, Role::kShard), "transactional.id"),
            "neardupd-crawl-pages-candidates-shard-1-replica");
  config.store.replica = false;
  const std::string merge =
      property(*producer_properties(config, Role::kMerge), "transactional.id");
  EXPECT_TRUE(merge.starts_with("neardupd-crawl-merge-")) << merge;
  EXPECT_TRUE(merge.ends_with(std::string(1, '-').append(std::to_string(getpid())))) << merge;
}

TEST(Roles, TransactionalIdsNeverCollideBetweenRolesOrWorkers) {
  Config config;
  config.kafka.group_id = "crawl";
  config.kafka.exactly_once = true;
  const std::string single = property(*producer_properties(config, Role::kSingle), "transactional.id");
  const std::string index = property(*producer_properties(config, Role::kIndex), "transactional.id");
  const std::string worker =
      property(*producer_properties(config, Role::kFingerprint), "transactional.id");
  EXPECT_EQ(single, "neardupd-crawl");
  EXPECT_EQ(index, "neardupd-crawl-index");
  EXPECT_TRUE(worker.starts_with("neardupd-crawl-fingerprint-")) << worker;
  const std::string pid = std::to_string(getpid());
  ASSERT_GT(worker.size(), pid.size());
  EXPECT_TRUE(worker.ends_with(pid)) << worker;
  EXPECT_EQ(worker[worker.size() - pid.size() - 1], '-') << worker;
  config.kafka.exactly_once = false;
  EXPECT_EQ(property(*producer_properties(config, Role::kFingerprint), "transactional.id"),
            "<none>");
}

TEST(Roles, TheSplitRolesRefuseASchemeThatLearnsAsAConfigurationError) {
  for (const Role role : {Role::kFingerprint, Role::kIndex}) {
    for (const bool tfidf : {false, true}) {
      Config config;
      config.kafka.bootstrap_servers = "127.0.0.1:1";  // never reached
      if (tfidf) {
        config.features.weighting = Weighting::kTfidf;
      } else {
        config.denoise.site_boilerplate = true;
      }
      const ops::ConfigHolder holder(config);
      auto daemon = Daemon::create(holder, nullptr, nullptr, role);
      ASSERT_FALSE(daemon.has_value());
      EXPECT_TRUE(daemon.error().config_error);
      EXPECT_NE(daemon.error().message.find("run the single role"), std::string::npos)
          << daemon.error().message;
    }
  }
}

// A shard's store may stand below its group's commits: built by a replica, restored, or new.
TEST(Roles, AShardStartsWhereItsStoreStandsWhenThatIsLower) {
  EXPECT_EQ(store_start(500, 799, false), 500);  // the store is ahead: its commits lead
  EXPECT_EQ(store_start(500, 299, false), 300);  // behind: from after its last applied record
  EXPECT_EQ(store_start(500, 499, false), 500);
  EXPECT_EQ(store_start(500, std::nullopt, true), RdKafka::Topic::OFFSET_BEGINNING);  // new
  // Pages but no position (kept since this build): the commits are all there is to go by.
  EXPECT_EQ(store_start(500, std::nullopt, false), 500);
  // No commit: auto.offset.reset (the beginning), whatever the store holds.
  EXPECT_EQ(store_start(RdKafka::Topic::OFFSET_INVALID, 299, false),
            RdKafka::Topic::OFFSET_INVALID);
}

}  // namespace
}  // namespace neardup::daemon
