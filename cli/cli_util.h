// Helpers shared by the `neardup` subcommands: config loading, file reading, JSON lines.
#pragma once

#include <nlohmann/json.hpp>

#include <expected>
#include <string>
#include <vector>

#include "config/config.h"

namespace neardup::cli {

// Loads --config F, or the defaults when path is empty. Prints the error on failure.
std::expected<Config, std::string> load_config_or_defaults(const std::string& path);

// Reads a whole file ("-" reads stdin).
std::expected<std::string, std::string> read_file(const std::string& path);

// Expands each path: a directory gives its *.html / *.htm files (sorted, not recursive), a
// file gives itself. Errors name the missing path.
std::expected<std::vector<std::string>, std::string> expand_html_inputs(
    const std::vector<std::string>& paths);

// Writes one JSON object as a line to stdout. Invalid UTF-8 is replaced, never thrown on.
void print_json_line(const nlohmann::json& object);

}  // namespace neardup::cli
