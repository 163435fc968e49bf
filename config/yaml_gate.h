// A fast, bounded syntax check of YAML text before yaml-cpp builds nodes from it.
//
// yaml-cpp 0.7 loops forever (allocating) on some invalid documents, e.g. one that starts with
// a flow indicator (","), and walks aliases as often as they are referenced. libyaml's event
// parser (heavily fuzzed, linear in the input) reads the text first: text it rejects, or text
// past the limits below, never reaches yaml-cpp. The limits are far above any real config.
#pragma once

#include <cstddef>
#include <expected>
#include <string>
#include <string_view>

namespace neardup {

struct YamlLimits {
  std::size_t max_bytes = 1 << 20;  // a config file larger than this is refused unread
  std::size_t max_depth = 32;       // nested mappings and sequences
  std::size_t max_nodes = 100000;   // scalars, mappings and sequences
};

struct YamlShape {
  std::size_t documents = 0;  // 0 for empty text or only comments
  std::size_t second_document_line = 0;  // 1-based line of the second document, if any
};

// Checks that text is well-formed YAML within the limits, and counts its documents. Aliases
// (*name) are refused: a config has no use for them and they multiply the work of a reader.
// Errors: "line L, column C: YAML syntax error: <what libyaml found>", or the limit that was
// passed with its line ("line 40, column 3: nested deeper than 32 levels").
std::expected<YamlShape, std::string> check_yaml(std::string_view text,
                                                  const YamlLimits& limits = {});

}  // namespace neardup
