// The `neardup` subcommands (docs/cli.md). Each register_* function adds one subcommand to
// the root app and the function that runs it once parsed. Exit codes: common/exit_codes.h.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <utility>
#include <vector>

#include "common/exit_codes.h"

namespace neardup::cli {

struct CommandRegistry {
  std::vector<std::pair<CLI::App*, std::function<int()>>> commands;
  void add(CLI::App* app, std::function<int()> run) { commands.emplace_back(app, std::move(run)); }
};

void register_fingerprint(CLI::App& root, CommandRegistry& registry);
void register_extract(CLI::App& root, CommandRegistry& registry);
void register_compare(CLI::App& root, CommandRegistry& registry);
void register_decode(CLI::App& root, CommandRegistry& registry);
void register_stats(CLI::App& root, CommandRegistry& registry);
void register_broker(CLI::App& root, CommandRegistry& registry);
void register_produce(CLI::App& root, CommandRegistry& registry);
void register_consume(CLI::App& root, CommandRegistry& registry);
void register_topics(CLI::App& root, CommandRegistry& registry);
void register_dedup(CLI::App& root, CommandRegistry& registry);  // and learn
void register_boilerplate(CLI::App& root, CommandRegistry& registry);
void register_bench(CLI::App& root, CommandRegistry& registry);
// lookup, show, clusters, forget, drop-scheme (cmd_query.cc).
void register_queries(CLI::App& root, CommandRegistry& registry);

}  // namespace neardup::cli
