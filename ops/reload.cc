#include "ops/reload.h"

#include <string_view>

namespace neardup::ops {
namespace {

// Every key outside the restart-only set, with its value as text, in config file order.
std::vector<Setting> live_settings(const Config& config) {
  std::vector<Setting> out = config_settings(config);
  std::erase_if(out, [](const Setting& s) { return is_restart_only(s.path); });
  return out;
}

}  // namespace

std::vector<std::string> live_reload_keys() {
  std::vector<std::string> out;
  for (Setting& setting : live_settings(Config{})) out.push_back(std::move(setting.path));
  return out;
}

ReloadPlan plan_reload(const Config& running, std::expected<Config, std::string> loaded,
                       std::uint32_t store_design_k,
                       const std::function<LshDesign(const std::string& scheme)>& stored_lsh) {
  if (!loaded) return std::unexpected(std::move(loaded.error()));
  if (loaded->dedup.max_distance > store_design_k) {
    return std::unexpected("dedup.max_distance: " + std::to_string(loaded->dedup.max_distance) +
                           " exceeds the store's design k " + std::to_string(store_design_k) +
                           "; reload rejected");
  }
  if (stored_lsh) {
    if (auto conflict = lsh_conflict(*loaded, stored_lsh)) {
      return std::unexpected(*conflict + "; reload rejected");
    }
  }
  ReloadAccepted plan;
  plan.needs_restart = restart_only_changes(running, *loaded);
  plan.config = std::move(*loaded);
  keep_restart_only(plan.config, running);
  const std::vector<Setting> before = live_settings(running);
  const std::vector<Setting> after = live_settings(plan.config);
  for (std::size_t i = 0; i < before.size(); ++i) {
    if (before[i].value != after[i].value) {
      plan.applied.push_back({before[i].path, before[i].value, after[i].value});
    }
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
