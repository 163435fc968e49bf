#include "ops/reload.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace neardup::ops {
namespace {

std::vector<std::string> keys(const std::vector<KeyChange>& changes) {
  std::vector<std::string> out;
  for (const auto& c : changes) out.push_back(c.key);
  return out;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(PlanReload, ParseErrorIsRejectedVerbatim) {
  Config running;
  auto plan = plan_reload(running, std::unexpected("features.ngram: must be 1..8, got 0"), 3);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error(), "features.ngram: must be 1..8, got 0");
}

TEST(PlanReload, MaxDistanceAboveTheStoreDesignIsRejected) {
  Config running;
  Config file;
  file.dedup.max_distance = 5;
  file.store.design_k = 6;  // the file cannot raise the open store's k
  auto plan = plan_reload(running, file, 3);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error(), "dedup.max_distance: 5 exceeds the store's design k 3; reload rejected");
}

TEST(PlanReload, MaxDistanceEqualToTheDesignKIsAccepted) {
  Config running;
  running.dedup.max_distance = 1;
  Config file = running;
  file.dedup.max_distance = 3;
  auto plan = plan_reload(running, file, 3);
  ASSERT_TRUE(plan) << plan.error();
  ASSERT_EQ(plan->applied.size(), 1u);
  EXPECT_EQ(plan->applied[0].key, "dedup.max_distance");
  EXPECT_EQ(plan->applied[0].before, "1");
  EXPECT_EQ(plan->applied[0].after, "3");
  EXPECT_EQ(plan->config.dedup.max_distance, 3u);
}

TEST(PlanReload, UnchangedFileChangesNothing) {
  Config running;
  auto plan = plan_reload(running, running, 3);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_TRUE(plan->applied.empty());
  EXPECT_TRUE(plan->needs_restart.empty());
  EXPECT_FALSE(plan->scheme_changed());
  EXPECT_FALSE(plan->changes_anything());
  EXPECT_EQ(describe(*plan), "reload accepted: no live setting changed");
}

TEST(PlanReload, LiveKeysAreAppliedAndListed) {
  Config running;
  Config file = running;
  file.dedup.max_distance = 2;
  file.log.level = LogLevel::kDebug;
  file.output.include_body = false;
  file.input.max_body_bytes = 1024;
  auto plan = plan_reload(running, file, 3);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(keys(plan->applied),
            (std::vector<std::string>{"input.max_body_bytes", "output.include_body",
                                      "dedup.max_distance", "log.level"}));
  EXPECT_EQ(plan->config.log.level, LogLevel::kDebug);
  EXPECT_FALSE(plan->config.output.include_body);
  EXPECT_EQ(plan->config.input.max_body_bytes, 1024u);
  EXPECT_FALSE(plan->scheme_changed());
  EXPECT_TRUE(plan->needs_restart.empty());
  EXPECT_EQ(describe(*plan),
            "reload accepted: input.max_body_bytes 10485760 -> 1024, output.include_body true -> "
            "false, dedup.max_distance 3 -> 2, log.level \"info\" -> \"debug\"");
}

TEST(PlanReload, RestartOnlyKeysKeepTheirRunningValues) {
  Config running;
  Config file = running;
  file.kafka.bootstrap_servers = "kafka:9092";
  file.kafka.properties["security.protocol"] = "ssl";
  file.store.path = "/elsewhere";
  file.metrics.listen = "0.0.0.0:9999";
  file.pipeline.threads = 7;
  file.log.level = LogLevel::kWarn;
  auto plan = plan_reload(running, file, 3);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(plan->config.kafka.bootstrap_servers, running.kafka.bootstrap_servers);
  EXPECT_TRUE(plan->config.kafka.properties.empty());
  EXPECT_EQ(plan->config.store.path, running.store.path);
  EXPECT_EQ(plan->config.metrics.listen, running.metrics.listen);
  EXPECT_EQ(plan->config.pipeline.threads, running.pipeline.threads);
  EXPECT_EQ(keys(plan->applied), std::vector<std::string>{"log.level"});
  EXPECT_EQ(plan->config.log.level, LogLevel::kWarn);
  // What the file asked for is reported, so the operator knows a restart is due.
  EXPECT_EQ(plan->needs_restart, restart_only_changes(running, file));
  // The effective config differs from the running one in no restart-only key.
  EXPECT_TRUE(restart_only_changes(running, plan->config).empty());
}

TEST(PlanReload, RestartOnlyChangesAreNamed) {
  Config running;
  Config file = running;
  file.kafka.group_id = "other";
  file.store.design_k = 4;
  file.metrics.listen = "0.0.0.0:9999";
  file.pipeline.threads = 7;
  auto plan = plan_reload(running, file, 3);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_TRUE(plan->applied.empty());
  ASSERT_FALSE(plan->needs_restart.empty()) << "restart_only_changes() names no key";
  for (const char* key : {"metrics.listen", "pipeline.threads"}) {
    EXPECT_TRUE(contains(plan->needs_restart, key)) << key;
  }
  auto any_with_prefix = [&](const std::string& prefix) {
    return std::any_of(plan->needs_restart.begin(), plan->needs_restart.end(),
                       [&](const std::string& k) { return k.starts_with(prefix); });
  };
  EXPECT_TRUE(any_with_prefix("kafka."));
  EXPECT_TRUE(any_with_prefix("store."));
  EXPECT_NE(describe(*plan).find("; needs a restart, left unchanged: "), std::string::npos);
}

TEST(PlanReload, SchemeSettingChangeStartsANewScheme) {
  Config running;
  Config file = running;
  file.features.ngram = 4;
  auto plan = plan_reload(running, file, 3);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(keys(plan->applied), std::vector<std::string>{"features.ngram"});
  EXPECT_EQ(plan->old_scheme, scheme_id(running));
  EXPECT_EQ(plan->new_scheme, scheme_id(file));
  EXPECT_TRUE(plan->scheme_changed()) << "scheme_id() ignores features.ngram";
  EXPECT_NE(describe(*plan).find("; scheme " + plan->old_scheme + " -> " + plan->new_scheme),
            std::string::npos);
}

TEST(PlanReload, AnLshDesignTheStoreDoesNotHoldItsSchemeInIsRejected) {
  // The store holds the default scheme banded 21 x 2 (its design when minhash.bands and rows
  // were unset); 42 x 3 set explicitly has the same scheme id.
  const Config running;
  const auto stored = [&](const std::string& scheme) {
    return scheme == scheme_id(running) ? kDefaultLsh : LshDesign{};
  };
  Config file = running;
  file.minhash.bands = 42;
  file.minhash.rows = 3;
  ASSERT_EQ(scheme_id(file), scheme_id(running));
  auto plan = plan_reload(running, file, 3, stored);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error(), "minhash.bands, minhash.rows: the store holds scheme " +
                              scheme_id(running) +
                              " banded 21 x 2, and the config asks for 42 x 3 under the same "
                              "scheme id: leave both unset to go on with the store's design, or "
                              "use another store for 42 x 3; reload rejected");
  // Other designs are other schemes (new to the store): accepted.
  file.minhash.bands = 21;
  file.minhash.rows = 2;
  EXPECT_TRUE(plan_reload(running, file, 3, stored));
  file.minhash.bands = 30;
  EXPECT_NE(scheme_id(file), scheme_id(running));
  EXPECT_TRUE(plan_reload(running, file, 3, stored));
}

TEST(PlanReload, NonSchemeChangeKeepsTheScheme) {
  Config running;
  Config file = running;
  file.dedup.max_distance = 0;
  file.output.include_body = false;
  auto plan = plan_reload(running, file, 3);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_FALSE(plan->scheme_changed());
  EXPECT_EQ(plan->old_scheme, plan->new_scheme);
}

// Walks the loader's own rendering of a Config (every key) to its leaf key paths.
void leaf_paths(const YAML::Node& node, const std::string& prefix, std::vector<std::string>& out) {
  if (!node.IsMap() || (node.size() == 0 && !prefix.empty())) {
    out.push_back(prefix);
    return;
  }
  for (const auto& entry : node) {
    std::string key = entry.first.as<std::string>();
    leaf_paths(entry.second, prefix.empty() ? key : prefix + "." + key, out);
  }
}

TEST(PlanReload, EveryMetricsKeyKeepsItsRunningValueAndIsNamed) {
  Config running;
  Config file = running;
  file.metrics.queries = !running.metrics.queries;
  auto plan = plan_reload(running, file, 3);
  ASSERT_TRUE(plan) << plan.error();
  EXPECT_EQ(plan->needs_restart, std::vector<std::string>{"metrics.queries"});
  // The running config keeps the value the listener was started with.
  EXPECT_EQ(plan->config.metrics.queries, running.metrics.queries);
  EXPECT_TRUE(plan->applied.empty());
}

TEST(PlanReload, EveryConfigKeyIsEitherLiveOrRestartOnly) {
  std::vector<std::string> paths;
  leaf_paths(YAML::Load(to_yaml(Config{})), "", paths);
  ASSERT_GT(paths.size(), 30u);
  std::vector<std::string> live = live_reload_keys();
  for (const std::string& path : paths) {
    bool restart_only = path.starts_with("kafka.") || path.starts_with("store.") ||
                        path.starts_with("metrics.") || path == "pipeline.threads";
    EXPECT_NE(restart_only, contains(live, path)) << path;
  }
  for (const std::string& key : live) EXPECT_TRUE(contains(paths, key)) << key << " is no key";
}

TEST(ConfigHolder, ReadersKeepTheirSnapshotAcrossAReplace) {
  Config first;
  first.dedup.max_distance = 1;
  ConfigHolder holder(first);
  auto snapshot = holder.current();
  Config second;
  second.dedup.max_distance = 2;
  holder.replace(second);
  EXPECT_EQ(snapshot->dedup.max_distance, 1u);
  EXPECT_EQ(holder.current()->dedup.max_distance, 2u);
}

TEST(ConfigHolder, ConcurrentReadersSeeWholeConfigs) {
  Config initial;
  initial.dedup.max_distance = 0;
  initial.kafka.group_id = "0";
  ConfigHolder holder(initial);
  std::atomic<bool> done = false;
  std::atomic<int> torn = 0;
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!done) {
        auto c = holder.current();
        if (std::to_string(c->dedup.max_distance) != c->kafka.group_id) ++torn;
      }
    });
  }
  for (std::uint32_t i = 1; i <= 2000; ++i) {
    Config next;
    next.dedup.max_distance = i;
    next.kafka.group_id = std::to_string(i);
    holder.replace(next);
  }
  done = true;
  for (auto& r : readers) r.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(holder.current()->dedup.max_distance, 2000u);
}

}  // namespace
}  // namespace neardup::ops
