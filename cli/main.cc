// neardup: the command line over the fingerprint pipeline, the index and the development
// Kafka tools (DESIGN.md §4).
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.h"
#include "common/log.h"

int main(int argc, char** argv) {
  using namespace neardup::cli;
  neardup::init_logging("info");

  CLI::App app{"neardup: find near-duplicate web pages (SimHash over main text)", "neardup"};
  app.set_version_flag("--version", std::string("neardup ") + NEARDUP_VERSION);
  app.require_subcommand(1);

  CommandRegistry registry;
  register_fingerprint(app, registry);
  register_extract(app, registry);
  register_compare(app, registry);
  register_decode(app, registry);
  register_stats(app, registry);
  register_broker(app, registry);
  register_produce(app, registry);
  register_consume(app, registry);
  register_topics(app, registry);
  register_dedup(app, registry);
  register_bench(app, registry);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  for (auto& [sub, run] : registry.commands) {
    if (sub->parsed()) return run();
  }
  return kExitUsage;
}
