// SIGHUP reload (docs/configuration.md): the pure decision of what a newly read config file
// changes, and the holder through which pages see the running config.
//
// Daemon, on SIGHUP (from its signal handling thread, never inside a signal handler; see
// daemon/main.cc):
//   notify_reloading();
//   auto plan = plan_reload(*holder.current(), load_config_file(path), index.stats().design_k);
//   if (!plan) { log warn plan.error(); metrics.reloads_rejected.inc(); }
//   else {
//     log info describe(*plan); set_log_level(plan->config.log.level);  // an enum: always valid
//     holder.replace(std::move(plan->config)); metrics.reloads_accepted.inc();
//   }
//   notify_ready();
// A new scheme needs nothing more: the index starts its tables on the scheme's first page.
// Pipeline workers call holder.current() once per page (the index stage once per batch) and
// use that snapshot throughout, so a page never sees half of a reload.
#pragma once

#include <atomic>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"

namespace neardup::ops {

// One key whose value a reload changes, with both values as text (for the log line).
struct KeyChange {
  std::string key;  // path, e.g. "dedup.max_distance"
  std::string before;
  std::string after;
};

struct ReloadAccepted {
  // The config to run from now on: the file's values, except that every key that needs a
  // restart (kafka.*, store.*, metrics.*, pipeline.threads) keeps its running value.
  Config config;
  std::string old_scheme;  // scheme_id(running)
  std::string new_scheme;  // scheme_id(config)
  // Keys applied live, in config file order: every key outside the restart-only set, i.e.
  // dedup.max_distance, log.level, output.*, input.*, the scheme settings (decode.*,
  // denoise.*, features.*, fingerprint.*) and pipeline.{max_in_flight,batch_size,
  // batch_delay_ms}. They take effect for the next page (the next batch for pipeline.*).
  std::vector<KeyChange> applied;
  // Keys changed in the file that need a restart and were left unchanged
  // (restart_only_changes(running, file)).
  std::vector<std::string> needs_restart;

  bool scheme_changed() const { return old_scheme != new_scheme; }
  bool changes_anything() const { return !applied.empty(); }
};

// Either the accepted reload or why it was rejected (the running config then stays as is):
// the file's parse/validation error verbatim, or
// "dedup.max_distance: 5 exceeds the store's design k 3; reload rejected", or an LSH design the
// store does not hold the new scheme in (lsh_conflict, config.h) and "; reload rejected".
using ReloadPlan = std::expected<ReloadAccepted, std::string>;

// Decides a reload. `loaded` is load_config_file()'s result; `store_design_k` is the k of the
// open store's design (not store.design_k of either file: the store fixes it at creation);
// `stored_lsh`, when given, the LSH design the open store holds a scheme in (IndexStats::lsh_of).
ReloadPlan plan_reload(const Config& running, std::expected<Config, std::string> loaded,
                       std::uint32_t store_design_k,
                       const std::function<LshDesign(const std::string& scheme)>& stored_lsh = {});

// The key paths plan_reload() applies live (ReloadAccepted::applied lists those that changed).
std::vector<std::string> live_reload_keys();

// One log line: "reload accepted: dedup.max_distance 3 -> 2, log.level "info" -> "debug";
// scheme s-1 -> s-2; needs a restart, left unchanged: kafka.group_id" (parts only if present).
std::string describe(const ReloadAccepted& plan);

// The running config, swapped atomically. Readers get a snapshot that stays valid (and
// unchanged) for as long as they hold it, however many reloads happen meanwhile.
class ConfigHolder {
 public:
  explicit ConfigHolder(Config initial)
      : current_(std::make_shared<const Config>(std::move(initial))) {}

  std::shared_ptr<const Config> current() const { return current_.load(); }
  void replace(Config next) { current_.store(std::make_shared<const Config>(std::move(next))); }

 private:
  std::atomic<std::shared_ptr<const Config>> current_;
};

}  // namespace neardup::ops
