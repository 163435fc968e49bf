// neardupd: the near-duplicate detection daemon (DESIGN.md §1, §6, §8).
//
//   neardupd --config F          run until SIGTERM/SIGINT (drain, commit, exit 0)
//   neardupd --check-config F    validate; print the effective config (exit 0) or the error (2)
//
// Signals are blocked in every thread and taken by the main thread alone (sigtimedwait), so no
// handler ever runs inside librdkafka or the index. Exit codes: 0 clean stop, 2 usage or config
// error, 3 start-up or fatal runtime error (logged as "fatal error=...").
#include <signal.h>

#include <CLI/CLI.hpp>
#include <ctime>
#include <iostream>
#include <thread>

#include "common/log.h"
#include "config/config.h"
#include "daemon/daemon.h"
#include "ops/metrics.h"
#include "ops/metrics_server.h"
#include "ops/notify.h"
#include "store/index.h"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr int kExitFailure = 3;

// Builds both Kafka configurations so that a bad kafka.properties entry is a config error.
std::expected<void, std::string> check_kafka_properties(const neardup::Config& config) {
  using namespace neardup;
  if (auto conf = kafka::make_conf(daemon::consumer_properties(config)); !conf) {
    return std::unexpected("kafka.properties: consumer: " + conf.error());
  }
  if (auto conf = kafka::make_conf(daemon::producer_properties(config)); !conf) {
    return std::unexpected("kafka.properties: producer: " + conf.error());
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace neardup;
  init_logging("info");

  CLI::App app{"neardupd: tags pages from Kafka as unique, duplicate or skipped", "neardupd"};
  app.set_version_flag("--version", std::string("neardupd ") + NEARDUP_VERSION);
  std::string config_path, check_path;
  auto* run_option = app.add_option("--config", config_path, "YAML config file to run with");
  auto* check_option =
      app.add_option("--check-config", check_path, "validate a config file, print it and exit");
  run_option->excludes(check_option);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  if (config_path.empty() && check_path.empty()) {
    std::cerr << "neardupd: --config F or --check-config F is required\n";
    return kExitUsage;
  }

  const bool checking = !check_path.empty();
  auto loaded = load_config_file(checking ? check_path : config_path);
  if (loaded) {
    if (auto checked = check_kafka_properties(*loaded); !checked) {
      loaded = std::unexpected(checked.error());
    }
  }
  if (!loaded) {
    std::cerr << loaded.error() << "\n";
    return kExitUsage;
  }
  if (checking) {
    std::cout << to_yaml(*loaded);
    return kExitOk;
  }
  auto config = std::make_shared<const Config>(std::move(*loaded));
  if (!set_log_level(config->log.level)) {
    std::cerr << "log.level: unknown level " << config->log.level << "\n";
    return kExitUsage;
  }
  auto log = logger("daemon");

  // Before any thread exists, so that every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  for (int signal : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, signal);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto index = Index::open(config->store);
  if (!index) {
    log->error("fatal error=\"cannot open the index at {}: {}\"", config->store.path,
               index.error());
    return kExitFailure;
  }
  ops::MetricsRegistry registry;
  ops::DaemonMetrics metrics(registry);
  std::unique_ptr<ops::MetricsServer> metrics_server;
  if (!config->metrics.listen.empty()) {
    auto server = ops::MetricsServer::start(config->metrics.listen, registry);
    if (!server) {
      log->error("fatal error=\"metrics.listen {}: {}\"", config->metrics.listen, server.error());
      return kExitFailure;
    }
    metrics_server = std::move(*server);
  }
  auto daemon = daemon::Daemon::create(config, std::move(*index), &metrics);
  if (!daemon) {
    log->error("fatal error=\"{}\"", daemon.error());
    return kExitFailure;
  }

  std::string fatal;
  std::thread runner([&] { fatal = (*daemon)->run(); });
  if (auto sent = ops::notify_ready(); !sent) log->warn("{}", sent.error());
  ops::WatchdogPinger watchdog;
  watchdog.start();
  const timespec tick{0, 200'000'000};
  while (!(*daemon)->finished()) {
    int signal = sigtimedwait(&signals, nullptr, &tick);
    if (signal == SIGTERM || signal == SIGINT) {
      log->info("stopping signal={}", signal == SIGTERM ? "SIGTERM" : "SIGINT");
      if (auto sent = ops::notify_stopping(); !sent) log->warn("{}", sent.error());
      (*daemon)->request_stop();
    } else if (signal == SIGHUP) {
      log->warn("reload not supported yet: SIGHUP ignored, the running config is kept");
    }
  }
  runner.join();
  watchdog.stop();
  if (!fatal.empty()) return kExitFailure;
  return kExitOk;
}
