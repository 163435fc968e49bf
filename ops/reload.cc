#include "ops/reload.h"

#include <functional>
#include <string_view>

namespace neardup::ops {
namespace {

std::string to_text(const std::string& v) { return v; }
std::string to_text(bool v) { return v ? "true" : "false"; }
std::string to_text(std::uint32_t v) { return std::to_string(v); }
std::string to_text(std::uint64_t v) { return std::to_string(v); }

struct LiveKey {
  std::string_view path;
  std::function<std::string(const Config&)> value;
};

template <typename Get>
LiveKey live(std::string_view path, Get get) {
  return {path, [get](const Config& c) { return to_text(get(c)); }};
}

// Every key outside the restart-only set (restart_only_changes), in config file order.
const std::vector<LiveKey>& live_keys() {
  static const std::vector<LiveKey> keys = {
      live("input.fields.url", [](const Config& c) { return c.input.fields.url; }),
      live("input.fields.id", [](const Config& c) { return c.input.fields.id; }),
      live("input.fields.body", [](const Config& c) { return c.input.fields.body; }),
      live("input.fields.body_base64", [](const Config& c) { return c.input.fields.body_base64; }),
      live("input.fields.content_type",
           [](const Config& c) { return c.input.fields.content_type; }),
      live("input.fields.fetched_at", [](const Config& c) { return c.input.fields.fetched_at; }),
      live("input.max_body_bytes", [](const Config& c) { return c.input.max_body_bytes; }),
      live("input.max_record_bytes", [](const Config& c) { return c.input.max_record_bytes; }),
      live("output.include_body", [](const Config& c) { return c.output.include_body; }),
      live("decode.default_charset", [](const Config& c) { return c.decode.default_charset; }),
      live("decode.detect", [](const Config& c) { return c.decode.detect; }),
      live("decode.prescan_bytes", [](const Config& c) { return c.decode.prescan_bytes; }),
      live("denoise.mode", [](const Config& c) { return c.denoise.mode; }),
      live("denoise.max_nodes", [](const Config& c) { return c.denoise.max_nodes; }),
      live("denoise.max_millis", [](const Config& c) { return c.denoise.max_millis; }),
      live("features.ngram", [](const Config& c) { return c.features.ngram; }),
      live("features.weighting", [](const Config& c) { return c.features.weighting; }),
      live("features.stop_words", [](const Config& c) { return c.features.stop_words; }),
      live("features.min_features", [](const Config& c) { return c.features.min_features; }),
      live("features.max_text_bytes", [](const Config& c) { return c.features.max_text_bytes; }),
      live("fingerprint.seed", [](const Config& c) { return c.fingerprint.seed; }),
      live("dedup.max_distance", [](const Config& c) { return c.dedup.max_distance; }),
      live("pipeline.max_in_flight", [](const Config& c) { return c.pipeline.max_in_flight; }),
      live("pipeline.batch_size", [](const Config& c) { return c.pipeline.batch_size; }),
      live("pipeline.batch_delay_ms", [](const Config& c) { return c.pipeline.batch_delay_ms; }),
      live("log.level", [](const Config& c) { return c.log.level; }),
  };
  return keys;
}

// The restart-only keys (DESIGN.md §7) keep their running values.
void keep_restart_only(Config& next, const Config& running) {
  next.kafka = running.kafka;
  next.store = running.store;
  next.metrics.listen = running.metrics.listen;
  next.pipeline.threads = running.pipeline.threads;
}

}  // namespace

std::vector<std::string> live_reload_keys() {
  std::vector<std::string> out;
  for (const LiveKey& key : live_keys()) out.emplace_back(key.path);
  return out;
}

ReloadPlan plan_reload(const Config& running, std::expected<Config, std::string> loaded,
                       std::uint32_t store_design_k) {
  if (!loaded) return std::unexpected(std::move(loaded.error()));
  if (loaded->dedup.max_distance > store_design_k) {
    return std::unexpected("dedup.max_distance: " + std::to_string(loaded->dedup.max_distance) +
                           " exceeds the store's design k " + std::to_string(store_design_k) +
                           "; reload rejected");
  }
  ReloadAccepted plan;
  plan.needs_restart = restart_only_changes(running, *loaded);
  plan.config = std::move(*loaded);
  keep_restart_only(plan.config, running);
  for (const LiveKey& key : live_keys()) {
    std::string before = key.value(running);
    std::string after = key.value(plan.config);
    if (before != after) plan.applied.push_back({std::string(key.path), before, after});
  }
  plan.old_scheme = scheme_id(running);
  plan.new_scheme = scheme_id(plan.config);
  return plan;
}

std::string describe(const ReloadAccepted& plan) {
  std::string out = "reload accepted: ";
  if (plan.applied.empty()) out += "no live setting changed";
  for (std::size_t i = 0; i < plan.applied.size(); ++i) {
    const KeyChange& c = plan.applied[i];
    if (i > 0) out += ", ";
    out += c.key + " " + c.before + " -> " + c.after;
  }
  if (plan.scheme_changed()) out += "; scheme " + plan.old_scheme + " -> " + plan.new_scheme;
  if (!plan.needs_restart.empty()) {
    out += "; needs a restart, left unchanged:";
    for (const std::string& key : plan.needs_restart) out += " " + key;
  }
  return out;
}

}  // namespace neardup::ops
