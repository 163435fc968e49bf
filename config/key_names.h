// The shape of the configuration document, from the key table (config/keys.h): every key path,
// every section, and the near-miss a misspelled key's error suggests. Internal to config/.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace neardup::config_keys {

struct Schema {
  std::vector<std::string> leaves;  // every key path, in table order
  std::set<std::string> sections;   // every proper prefix: "kafka", "input", "input.fields", ...

  bool is_leaf(std::string_view path) const;
  // The names directly under a section ("" for the top level).
  std::vector<std::string> children(std::string_view section) const;
};

// Built once from for_each_key() over a default Config.
const Schema& schema();

// "section.name", or the name alone at the top level (section "").
std::string join_path(std::string_view section, std::string_view name);

// " (did you mean features.ngram?)" for a near-miss among the section's own keys, or for the
// same name in another section; a hint for a dotted key written where a nested map belongs;
// "" when nothing is close.
std::string did_you_mean(std::string_view section, std::string_view name);

}  // namespace neardup::config_keys
