#include "config/key_names.h"

#include <algorithm>

#include "common/edit_distance.h"
#include "config/keys.h"

namespace neardup::config_keys {

bool Schema::is_leaf(std::string_view path) const {
  return std::ranges::find(leaves, path) != leaves.end();
}

std::vector<std::string> Schema::children(std::string_view section) const {
  std::vector<std::string> names;
  auto add = [&](std::string_view path) {
    std::string_view rest = path;
    if (!section.empty()) {
      if (!path.starts_with(section) || path.size() <= section.size() ||
          path[section.size()] != '.') {
        return;
      }
      rest = path.substr(section.size() + 1);
    }
    std::string name(rest.substr(0, rest.find('.')));
    if (std::ranges::find(names, name) == names.end()) names.push_back(std::move(name));
  };
  for (const std::string& leaf : leaves) add(leaf);
  return names;
}

const Schema& schema() {
  static const Schema instance = [] {
    Schema s;
    const Config defaults;
    for_each_key(defaults, [&](const Key& key, const auto&) {
      s.leaves.emplace_back(key.path);
      for (std::size_t dot = key.path.find('.'); dot != std::string_view::npos;
           dot = key.path.find('.', dot + 1)) {
        s.sections.emplace(key.path.substr(0, dot));
      }
    });
    return s;
  }();
  return instance;
}

std::string join_path(std::string_view section, std::string_view name) {
  return section.empty() ? std::string(name) : cat(section, ".", name);
}

std::string did_you_mean(std::string_view section, std::string_view name) {
  const Schema& s = schema();
  if (s.is_leaf(join_path(section, name)) || s.sections.contains(join_path(section, name))) {
    // A dotted key such as `features.ngram: 3` at the top level.
    return " (write sections as nested maps, not dotted keys)";
  }
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(1, name.size() / 3) + 1;
  for (const std::string& child : s.children(section)) {
    std::size_t distance = edit_distance(name, child);
    if (distance < best_distance) {
      best_distance = distance;
      best = join_path(section, child);
    }
  }
  if (best.empty()) {
    const std::string tail = cat(".", name);
    for (const std::string& leaf : s.leaves) {
      if (leaf.ends_with(tail)) {
        best = leaf;
        break;
      }
    }
    for (const std::string& other : s.sections) {
      if (best.empty() && other.ends_with(tail)) best = other;
    }
  }
  return best.empty() ? std::string() : cat(" (did you mean ", best, "?)");
}

}  // namespace neardup::config_keys
