// neardupd: the near-duplicate detection daemon (docs/operations.md, docs/delivery.md).
//
//   neardupd --config F          run until SIGTERM/SIGINT (drain, commit, exit 0); SIGHUP
//                                reloads F
//   neardupd --config F --role R one role of a scaled-out deployment: fingerprint (any number)
//                                or index (one, the store's owner); daemon/README.md; or, the
//                                index split into store.shards shards: shard (with --shard J:
//                                one per shard) and merge (any number); docs/scale-out.md
//   neardupd --check-config F    validate; print the effective config (exit 0) or the error (2);
//                                with --role R, also check what R needs of the Kafka cluster
//
// READY=1 goes to systemd once Daemon::readiness() first holds (index open, a broker reachable,
// partitions assigned); until then STATUS= says what it waits for, and /readyz answers 503.
//
// Signals are blocked in every thread and taken by the main thread alone (sigtimedwait), so no
// handler ever runs inside librdkafka or the index. The main thread also reloads the config,
// refreshes the index gauges and sends systemd its STATUS= line. Exit codes: 0 clean stop,
// 2 usage or config error (also a topic the config names that the cluster lacks), 3 start-up or
// fatal runtime error (logged as "fatal error=...").
#include <fmt/format.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <ctime>
#include <iostream>
#include <optional>
#include <thread>

#include "common/exit_codes.h"
#include "common/help.h"
#include "common/log.h"
#include "common/thread_name.h"
#include "config/config.h"
#include "daemon/clients.h"
#include "daemon/daemon.h"
#include "daemon/queries.h"
#include "ops/metrics.h"
#include "ops/metrics_server.h"
#include "ops/notify.h"
#include "ops/reload.h"
#include "store/index.h"
#include "store/table_design.h"

namespace {

// How often the index gauges and systemd's STATUS= line are refreshed.
constexpr std::chrono::seconds kStatusPeriod{2};

using Clock = std::chrono::steady_clock;

// Builds both Kafka configurations so that a bad kafka.*properties entry, or a secret that
// cannot be read, is a config error.
std::expected<void, std::string> check_kafka_properties(const neardup::Config& config) {
  using namespace neardup;
  for (auto [properties, client] : {std::pair{daemon::consumer_properties(config), "consumer"},
                                    std::pair{daemon::producer_properties(config), "producer"}}) {
    if (!properties) return std::unexpected(properties.error());
    if (auto conf = kafka::make_conf(*properties); !conf) {
      return std::unexpected(std::string("kafka properties: ") + client + ": " + conf.error());
    }
  }
  return {};
}

// The config file as this process runs it: with --shard J, shard J's (store.shard = J, its store
// in <store.path>/shard-J; with --replica, a standby replica of it), at start and at every
// reload alike.
struct ShardFlags {
  std::optional<std::uint32_t> shard;  // --shard J
  bool replica = false;                // --replica
};
std::expected<neardup::Config, std::string> load_for(const std::string& path,
                                                     const ShardFlags& flags) {
  auto loaded = neardup::load_config_file(path);
  const std::optional<std::uint32_t>& shard = flags.shard;
  if (!loaded || !shard) return loaded;
  loaded->store.replica = flags.replica;
  if (*shard >= loaded->store.shards) {
    return std::unexpected("--shard " + std::to_string(*shard) + ": must be below store.shards (" +
                           std::to_string(loaded->store.shards) + ")");
  }
  loaded->store.shard = *shard;
  loaded->store.path += "/shard-" + std::to_string(*shard);
  return loaded;
}

// Multi-line errors (one per bad key) as one log line.
std::string one_line(std::string text) {
  std::ranges::replace(text, '\n', ';');
  return text;
}

constexpr const char* kFooter = R"(Exit status: 0 clean stop (SIGTERM/SIGINT) or valid config; 2 usage or config error, also
a topic the config names that the cluster lacks (the unit does not restart on it:
RestartPreventExitStatus=2); 3 start-up or fatal runtime error.
Signals: SIGTERM/SIGINT drain and stop, SIGHUP reloads the config file.
HTTP on metrics.listen: /metrics (Prometheus), /healthz (alive), /readyz (ready).)";

// SIGHUP (docs/configuration.md, "Reload"): reads and validates the whole file; an accepted
// config replaces the running one between pages, a rejected one leaves it as it was. Once the
// daemon has been ready, systemd sees RELOADING=1 ... READY=1 whatever the outcome.
void reload(const std::string& path, const ShardFlags& shard, neardup::ops::ConfigHolder& holder,
            neardup::daemon::Daemon& daemon, neardup::ops::DaemonMetrics& metrics,
            spdlog::logger& log, bool notify) {
  using namespace neardup;
  if (notify) {
    if (auto sent = ops::notify_reloading(); !sent) log.warn("{}", sent.error());
  }
  const std::shared_ptr<const Config> running = holder.current();
  // The open store's k bounds dedup.max_distance, whatever store.design_k the files say.
  const IndexStats stats = daemon.index_stats();
  std::uint32_t design_k = stats.design_k;
  if (design_k == 0) design_k = running->store.design_k;
  auto plan =
      ops::plan_reload(*running, load_for(path, shard), design_k,
                       [&stats](const std::string& scheme) { return stats.lsh_of(scheme); });
  if (!plan) {
    log.warn("reload rejected, the running config is kept: {}", one_line(plan.error()));
    metrics.reloads_rejected.inc();
  } else {
    set_log_level(plan->config.log.level);
    set_log_format(plan->config.log.format);
    // Restart-only keys are named in the line; they call for the operator's attention.
    if (plan->needs_restart.empty()) {
      log.info("{}", ops::describe(*plan));
    } else {
      log.warn("{}", ops::describe(*plan));
    }
    holder.replace(std::move(plan->config));
    metrics.reloads_accepted.inc();
  }
  if (notify) {
    if (auto sent = ops::notify_ready(); !sent) log.warn("{}", sent.error());
  }
}

// Pages per second since the previous call, the index gauges, and systemd's STATUS= line.
class StatusReporter {
 public:
  // `replica`: a shard's standby replica, which publishes nothing (its rate counts pages in).
  StatusReporter(neardup::daemon::Daemon& daemon, neardup::ops::DaemonMetrics& metrics,
                 bool replica)
      : daemon_(daemon), metrics_(metrics), replica_(replica), last_time_(Clock::now()) {}

  // `waiting`: why the daemon is not ready (empty while it is).
  void report(spdlog::logger& log, const std::string& waiting) {
    using namespace neardup;
    const IndexStats stats = daemon_.index_stats();
    metrics_.index_documents.set(static_cast<double>(stats.documents));
    metrics_.index_bytes.set(static_cast<double>(stats.bytes_on_disk));
    const daemon::DaemonCounts counts = daemon_.counts();
    const std::uint64_t done = replica_ ? counts.pages_in : counts.outputs + counts.dead_letters;
    const auto now = Clock::now();
    const double elapsed = std::chrono::duration<double>(now - last_time_).count();
    const double rate = elapsed > 0 ? static_cast<double>(done - last_done_) / elapsed : 0;
    last_time_ = now;
    last_done_ = done;
    const std::string prefix = waiting.empty() ? "" : "not ready: " + waiting + "; ";
    std::string line;
    switch (daemon_.role()) {
      case daemon::Role::kFingerprint:
        line = fmt::format("{}fingerprint worker: {:.0f} pages/s; {} pages in, {} fingerprinted",
                           prefix, rate, counts.pages_in, counts.outputs);
        break;
      case daemon::Role::kMerge:
        line = fmt::format("{}merge: {:.0f} pages/s; {} answers in, {} out, {} dead letters",
                           prefix, rate, counts.pages_in, counts.outputs, counts.dead_letters);
        break;
      default: {
        std::string role;
        if (daemon_.role() == daemon::Role::kIndex) role = "index: ";
        if (daemon_.role() == daemon::Role::kShard) {
          role = fmt::format("shard {} of {}{}: ", stats.shard, stats.shards,
                             replica_ ? " (replica)" : "");
        }
        line = fmt::format(
            "{}{}{:.0f} pages/s; {} pages in, {} out, {} dead letters; index {} "
            "documents, {:.1f} MiB",
            prefix, role, rate, counts.pages_in, counts.outputs, counts.dead_letters,
            stats.documents, static_cast<double>(stats.bytes_on_disk) / (1 << 20));
      }
    }
    auto sent = ops::notify_status(line);
    if (!sent) log.warn("{}", sent.error());
  }

 private:
  neardup::daemon::Daemon& daemon_;
  neardup::ops::DaemonMetrics& metrics_;
  const bool replica_;
  Clock::time_point last_time_;
  std::uint64_t last_done_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace neardup;
  init_logging(LogLevel::kInfo);

  CLI::App app{
      "neardupd: tags pages from Kafka as unique, duplicate or skipped (SimHash and MinHash "
      "over the main text)",
      "neardupd"};
  use_help_formatter(app);
  app.set_version_flag("--version", std::string("neardupd ") + NEARDUP_VERSION);
  app.footer(kFooter);
  std::string config_path, check_path, generate, role_text = "single";
  auto* run_option = app.add_option("--config", config_path, "YAML config file to run with")
                         ->option_text("FILE");
  auto* check_option =
      app.add_option("--check-config", check_path, "validate a config file, print it and exit")
          ->option_text("FILE");
  run_option->excludes(check_option);
  app.add_option("--role", role_text,
                 "single (default): the whole daemon; fingerprint: a worker publishing "
                 "fingerprinted pages to kafka.fingerprint_topic (any number); index: the "
                 "store's one owner, consuming them; shard: shard --shard J of an index split "
                 "into store.shards, consuming them; merge: a merge stage, publishing the "
                 "outputs from the shards' answers (any number)")
      ->option_text("ROLE")
      ->check(CLI::IsMember({"single", "fingerprint", "index", "shard", "merge"}));
  ShardFlags shard;
  app.add_option("--shard", shard.shard,
                 "with --role shard: which shard of store.shards this process holds (its store "
                 "is <store.path>/shard-J)")
      ->option_text("J");
  app.add_flag("--replica", shard.replica,
               "with --shard J: a standby replica of shard J, building the same store under a "
               "consumer group of its own and publishing nothing; a primary started on its "
               "store takes over at once (docs/scale-out.md)");
  // For the build: the man page and completion script, generated from this help.
  app.add_option("--generate", generate)->group("")->check(CLI::IsMember({"man", "complete-bash"}));
  set_examples(&app, {"neardupd --check-config /etc/neardup/neardup.yaml",
                      "neardupd --config /etc/neardup/neardup.yaml   (as systemd runs it)",
                      "neardupd --config /etc/neardup/neardup.yaml --role fingerprint"});
  if (auto checked = check_arguments(app, std::vector<std::string>(argv + 1, argv + argc));
      !checked) {
    std::cerr << checked.error() << "\n";
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  if (!generate.empty()) {
    std::cout << (generate == "man"
                      ? render_man_page(
                            app, "8", NEARDUP_VERSION,
                            {{"FILES",
                              "/etc/neardup/neardup.yaml: the configuration (every key is "
                              "documented in it).\n\n/var/lib/neardup: the index."},
                             {"SEE ALSO",
                              "neardup(1), systemctl(1), journalctl(1); the "
                              "documentation in /usr/share/doc/neardup/."}})
                      : render_bash_completion(app));
    return kExitOk;
  }
  if (config_path.empty() && check_path.empty()) {
    std::cerr << "neardupd: --config F or --check-config F is required\n";
    return kExitUsage;
  }

  const bool checking = !check_path.empty();
  auto loaded = load_for(checking ? check_path : config_path, shard);
  if (loaded) {
    if (auto checked = check_kafka_properties(*loaded); !checked) {
      loaded = std::unexpected(checked.error());
    } else if (auto design = TableDesign::for_store(loaded->store.design_k,
                                                    loaded->store.expected_documents,
                                                    loaded->store.tables);
               !design) {
      loaded = std::unexpected(design.error());  // a store that could never be opened
    }
  }
  if (!loaded) {
    std::cerr << loaded.error() << "\n";
    return kExitUsage;
  }
  if (checking) {
    for (const std::string& warning : config_warnings(*loaded)) {
      std::cerr << "warning: " << warning << "\n";
    }
    if (app.count("--role") > 0) {
      // With a role: what it needs of the cluster as well.
      const auto role = *daemon::parse_role(role_text);
      auto config = std::make_shared<const Config>(*loaded);
      if (auto checked = daemon::Daemon::check_cluster(config, role); !checked) {
        std::cerr << "neardupd: --role " << role_text << ": " << checked.error() << "\n";
        return kExitUsage;
      }
      std::cerr << "neardupd: --role " << role_text << ": the topics it needs are on "
                << loaded->kafka.bootstrap_servers << " and agree\n";
    }
    std::cout << to_yaml(*loaded);
    return kExitOk;
  }
  ops::ConfigHolder holder(std::move(*loaded));
  const std::shared_ptr<const Config> config = holder.current();  // start-up values
  set_log_level(config->log.level);
  set_log_format(config->log.format);
  auto log = logger("daemon");
  for (const std::string& warning : config_warnings(*config)) log->warn("config {}", warning);

  // Before any thread exists, so that every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  for (int signal : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, signal);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  const daemon::Role role = *daemon::parse_role(role_text);  // CLI11 checked the name
  if ((role == daemon::Role::kShard) != shard.shard.has_value()) {
    std::cerr << "neardupd: --shard J goes with --role shard, and only with it\n";
    return kExitUsage;
  }
  if (shard.replica && !shard.shard) {
    std::cerr << "neardupd: --replica goes with --role shard --shard J, and only with it\n";
    return kExitUsage;
  }
  std::unique_ptr<Index> index;  // a fingerprint worker and a merge stage have none
  if (role != daemon::Role::kFingerprint && role != daemon::Role::kMerge) {
    auto opened = Index::open(config->store);
    if (!opened) {
      log->error("fatal error=\"cannot open the index at {}: {}\"", config->store.path,
                 opened.error().message);
      return kExitFailure;
    }
    index = std::move(*opened);
    const IndexStats stats = index->stats();
    if (auto conflict =
            lsh_conflict(*config, [&](const std::string& s) { return stats.lsh_of(s); })) {
      log->error("fatal error=\"{}\"", *conflict);
      return kExitUsage;
    }
  }
  ops::MetricsRegistry registry;
  ops::DaemonMetrics metrics(registry);
  metrics.role.labels({std::string(daemon::role_name(role))}).set(1);
  auto created = daemon::Daemon::create(holder, std::move(index), &metrics, role);
  if (!created) {
    log->error("fatal error=\"{}\"", created.error().message);
    return created.error().config_error ? kExitUsage : kExitFailure;
  }
  daemon::Daemon& daemon = **created;
  const ops::HealthCheck health = [&daemon] { return daemon.health(); };
  const ops::HealthCheck ready = [&daemon] { return daemon.readiness(); };
  std::unique_ptr<ops::MetricsServer> metrics_server;
  if (!config->metrics.listen.empty()) {
    const bool queries = config->metrics.queries && role != daemon::Role::kFingerprint &&
                         role != daemon::Role::kMerge;
    auto server = ops::MetricsServer::start(
        config->metrics.listen, registry, health, ready,
        queries ? daemon::query_handlers(daemon, holder) : ops::QueryHandlers{});
    if (!server) {
      log->error("fatal error=\"metrics.listen {}: {}\"", config->metrics.listen, server.error());
      return kExitFailure;
    }
    metrics_server = std::move(*server);
    log->info("metrics listening on {}:{}{}", metrics_server->host(), metrics_server->port(),
              queries ? " (with /v1/lookup and /v1/pages/)" : "");
  }

  std::expected<void, std::string> ran;
  std::thread runner([&] {
    name_this_thread("nd:consume");
    ran = daemon.run();
  });
  StatusReporter status(daemon, metrics, shard.replica);
  bool ready_sent = false;
  // READY=1 once, the first time the daemon is ready; STATUS= says why not until then.
  auto check_ready = [&] {
    if (ready_sent) return std::string();
    auto verdict = daemon.readiness();
    if (!verdict) return verdict.error();
    ready_sent = true;
    log->info("ready");
    if (auto sent = ops::notify_ready(); !sent) log->warn("{}", sent.error());
    return std::string();
  };
  status.report(*log, check_ready());
  ops::WatchdogPinger watchdog;
  // No ping while the daemon is stuck: systemd then restarts it (WatchdogSec).
  watchdog.start([&health, &log] {
    auto healthy = health();
    if (!healthy) log->error("unhealthy, no watchdog ping: {}", healthy.error());
    return healthy.has_value();
  });
  const timespec tick{0, 200'000'000};
  auto next_status = Clock::now() + kStatusPeriod;
  while (!daemon.finished()) {
    int signal = sigtimedwait(&signals, nullptr, &tick);
    if (signal == SIGTERM || signal == SIGINT) {
      log->info("stopping signal={}", signal == SIGTERM ? "SIGTERM" : "SIGINT");
      if (auto sent = ops::notify_stopping(); !sent) log->warn("{}", sent.error());
      daemon.request_stop();
    } else if (signal == SIGHUP) {
      log->info("reloading config={}", config_path);
      reload(config_path, shard, holder, daemon, metrics, *log, ready_sent);
    }
    check_ready();
    // After READY=1 too, STATUS= says why the daemon is not ready (e.g. a partial assignment).
    const auto readiness = daemon.readiness();
    metrics.ready.set(readiness ? 1 : 0);
    if (Clock::now() >= next_status) {
      status.report(*log, readiness ? std::string() : readiness.error());
      next_status = Clock::now() + kStatusPeriod;
    }
  }
  runner.join();
  watchdog.stop();
  if (!ran) return kExitFailure;
  return kExitOk;
}
