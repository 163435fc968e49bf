// Lints the deployment files without running them: compose.yaml is valid YAML with the expected
// services, and it agrees with the daemon config it mounts (topics, bootstrap, metrics port),
// which itself loads with the daemon's own config loader; the Grafana dashboard and the
// Prometheus rules only query series that neardupd exports. (`promtool check rules` and
// `promtool test rules` run as their own tests.)
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <iterator>
#include <set>
#include <sstream>
#include <string>

#include "config/config.h"
#include "ops/metrics.h"

namespace neardup {
namespace {

const std::filesystem::path kSource = NEARDUP_SOURCE_DIR;

class Deploy : public ::testing::Test {
 protected:
  void SetUp() override {
    compose_ = YAML::LoadFile((kSource / "compose.yaml").string());
    services_ = compose_["services"];
    ASSERT_TRUE(services_.IsMap());
    auto loaded = load_config_file((kSource / "deploy/neardup.compose.yaml").string());
    ASSERT_TRUE(loaded) << loaded.error();
    config_ = *loaded;
  }

  YAML::Node compose_;
  YAML::Node services_;
  Config config_;
};

TEST_F(Deploy, KafkaRunsPinnedInKraftModeWithAHealthcheck) {
  YAML::Node kafka = services_["kafka"];
  ASSERT_TRUE(kafka.IsMap());
  EXPECT_EQ(kafka["image"].as<std::string>(), "apache/kafka:3.9.1");
  YAML::Node env = kafka["environment"];
  EXPECT_EQ(env["KAFKA_PROCESS_ROLES"].as<std::string>(), "broker,controller");
  EXPECT_EQ(env["KAFKA_CONTROLLER_QUORUM_VOTERS"].as<std::string>(),
            env["KAFKA_NODE_ID"].as<std::string>() + "@kafka:9093");
  EXPECT_EQ(env["CLUSTER_ID"].as<std::string>().size(), 22u);  // base64 of a 16-byte UUID
  EXPECT_TRUE(kafka["healthcheck"]["test"].IsSequence());
}

TEST_F(Deploy, DaemonConfigPointsAtTheKafkaService) {
  std::string advertised =
      services_["kafka"]["environment"]["KAFKA_ADVERTISED_LISTENERS"].as<std::string>();
  EXPECT_NE(advertised.find("PLAINTEXT://" + config_.kafka.bootstrap_servers), std::string::npos)
      << config_.kafka.bootstrap_servers << " is not an advertised listener: " << advertised;
}

TEST_F(Deploy, InitServiceCreatesEveryTopicTheDaemonUses) {
  YAML::Node init = services_["kafka-init"];
  ASSERT_TRUE(init.IsMap());
  EXPECT_EQ(init["image"].as<std::string>(), services_["kafka"]["image"].as<std::string>());
  EXPECT_EQ(init["depends_on"]["kafka"]["condition"].as<std::string>(), "service_healthy");
  std::string script = init["command"][0].as<std::string>();
  EXPECT_NE(script.find("kafka-topics.sh"), std::string::npos);
  // The topics are the words of its "for topic in ...;" loop.
  auto begin = script.find("for topic in ");
  ASSERT_NE(begin, std::string::npos) << script;
  begin += std::string("for topic in ").size();
  std::istringstream words(script.substr(begin, script.find(';', begin) - begin));
  std::set<std::string> created{std::istream_iterator<std::string>(words), {}};
  for (const std::string& topic :
       {config_.kafka.input_topic, config_.kafka.output_topic, config_.kafka.dead_letter_topic}) {
    EXPECT_TRUE(created.contains(topic)) << "kafka-init does not create topic " << topic;
  }
}

TEST_F(Deploy, TheShardedProfileRunsEveryRoleOnOneExactlyOnceConfig) {
  auto loaded = load_config_file((kSource / "deploy/neardup.sharded.yaml").string());
  ASSERT_TRUE(loaded) << loaded.error();
  const Config& sharded = *loaded;
  EXPECT_TRUE(sharded.kafka.exactly_once);  // the shards and merge stages refuse to start without
  ASSERT_EQ(sharded.store.shards, 3u);
  const auto args = [&](const std::string& service) {
    YAML::Node command = services_[service]["command"];
    return command.IsSequence() ? command.as<std::vector<std::string>>()
                                : std::vector<std::string>{};
  };
  for (std::uint32_t j = 0; j < sharded.store.shards; ++j) {
    EXPECT_EQ(args("neardup-shard-" + std::to_string(j)),
              (std::vector<std::string>{"--config", "/etc/neardup/neardup.yaml", "--role", "shard",
                                        "--shard", std::to_string(j)}));
  }
  for (const char* service : {"neardup-merge-1", "neardup-merge-2"}) {
    EXPECT_EQ(args(service), (std::vector<std::string>{"--config", "/etc/neardup/neardup.yaml",
                                                       "--role", "merge"}))
        << service;
  }
  const std::string script = services_["kafka-init"]["command"][0].as<std::string>();
  const auto loop = script.substr(0, script.find(';'));
  EXPECT_NE(loop.find(" " + sharded.kafka.candidates_topic), std::string::npos) << script;
  EXPECT_NE(loop.find(" " + sharded.kafka.fingerprint_topic), std::string::npos) << script;
  const auto documents = script.find("--topic " + sharded.kafka.documents_topic + " ");
  ASSERT_NE(documents, std::string::npos) << script;
  EXPECT_NE(script.find("cleanup.policy=compact", documents), std::string::npos) << script;
}

TEST_F(Deploy, DaemonMountsItsConfigAndStateAndPublishesMetrics) {
  YAML::Node daemon = services_["neardupd"];
  ASSERT_TRUE(daemon.IsMap());
  EXPECT_EQ(daemon["depends_on"]["kafka-init"]["condition"].as<std::string>(),
            "service_completed_successfully");
  std::set<std::string> mounts;
  for (const auto& volume : daemon["volumes"]) mounts.insert(volume.as<std::string>());
  EXPECT_TRUE(mounts.contains("./deploy/neardup.compose.yaml:/etc/neardup/neardup.yaml:ro"));
  EXPECT_TRUE(mounts.contains("neardup-state:" + config_.store.path));
  EXPECT_TRUE(compose_["volumes"]["neardup-state"].IsDefined());
  EXPECT_TRUE(compose_["volumes"]["kafka-data"].IsDefined());

  // The healthcheck and the published port both reach metrics.listen's port.
  EXPECT_TRUE(config_.metrics.listen.starts_with("0.0.0.0:")) << config_.metrics.listen;
  std::string port = config_.metrics.listen.substr(config_.metrics.listen.rfind(':') + 1);
  EXPECT_EQ(daemon["ports"][0].as<std::string>(), "127.0.0.1:" + port + ":" + port);
  std::string health = daemon["healthcheck"]["test"][3].as<std::string>();
  EXPECT_NE(health.find("/dev/tcp/127.0.0.1/" + port), std::string::npos) << health;
  EXPECT_NE(health.find("GET /healthz"), std::string::npos);
}

TEST_F(Deploy, EveryNamedVolumeIsDeclared) {
  for (const auto& service : services_) {
    for (const auto& volume : service.second["volumes"]) {
      std::string spec = volume.as<std::string>();
      std::string source = spec.substr(0, spec.find(':'));
      if (source.starts_with(".") || source.starts_with("/")) {
        EXPECT_TRUE(std::filesystem::exists(kSource / source)) << spec;
      } else {
        EXPECT_TRUE(compose_["volumes"][source].IsDefined()) << spec;
      }
    }
  }
}

// The metric names a PromQL expression uses: words followed by "{", "[" or ")" / space that
// start with neardup_ or process_ (label names and functions do not).
std::set<std::string> metric_names(const std::string& expr) {
  static const std::regex kName(R"(\b((?:neardup|process)_[a-z_]+)\b)");
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(expr.begin(), expr.end(), kName); it != std::sregex_iterator();
       ++it) {
    names.insert((*it)[1].str());
  }
  return names;
}

// Every series name neardupd's /metrics can show (histograms with their suffixes).
std::set<std::string> exported_names() {
  ops::MetricsRegistry registry;
  ops::DaemonMetrics metrics(registry);
  std::istringstream text(registry.render());
  std::set<std::string> names;
  for (std::string line; std::getline(text, line);) {
    if (line.starts_with("# TYPE ")) {
      std::istringstream words(line.substr(7));
      std::string name, type;
      words >> name >> type;
      names.insert(name);
      if (type == "histogram") {
        for (const char* suffix : {"_bucket", "_sum", "_count"}) names.insert(name + suffix);
      }
    }
  }
  return names;
}

TEST(Dashboards, TheGrafanaDashboardQueriesOnlyExportedSeries) {
  std::ifstream in(kSource / "deploy/grafana/neardup.json");
  auto dashboard = nlohmann::json::parse(in);
  const std::set<std::string> exported = exported_names();
  std::size_t queries = 0;
  for (const auto& panel : dashboard["panels"]) {
    EXPECT_FALSE(panel["title"].get<std::string>().empty());
    for (const auto& target : panel["targets"]) {
      const std::string expr = target["expr"];
      ++queries;
      auto names = metric_names(expr);
      EXPECT_FALSE(names.empty()) << expr;
      for (const auto& name : names) EXPECT_TRUE(exported.contains(name)) << name << " in " << expr;
    }
  }
  EXPECT_GE(queries, 10u);
}

TEST(Dashboards, TheAlertRulesQueryOnlyExportedSeries) {
  YAML::Node rules = YAML::LoadFile((kSource / "deploy/prometheus/neardup.rules.yaml").string());
  const std::set<std::string> exported = exported_names();
  std::size_t alerts = 0;
  for (const auto& group : rules["groups"]) {
    for (const auto& rule : group["rules"]) {
      ++alerts;
      const std::string expr = rule["expr"].as<std::string>();
      for (const auto& name : metric_names(expr)) {
        EXPECT_TRUE(exported.contains(name)) << name << " in " << rule["alert"].as<std::string>();
      }
      EXPECT_TRUE(rule["annotations"]["summary"].IsDefined()) << rule["alert"].as<std::string>();
    }
  }
  EXPECT_GE(alerts, 8u);
}

}  // namespace
}  // namespace neardup
