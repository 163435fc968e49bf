// neardup: the command line over the fingerprint pipeline, the index and the development
// Kafka tools (docs/cli.md). Exit codes: 0 success, 1 "no" (compare, consume), 2 usage, config
// or input error, 3 other failures.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "common/help.h"
#include "common/log.h"

namespace {

constexpr const char* kRootFooter = R"(Exit status: 0 success; 1 "no" (compare: not near-duplicates; consume: fewer
than --count records); 2 usage, config or input error (the message names the option, key,
line or missing topic); 3 any other failure.
Results go to stdout, logs and progress to stderr. `neardup COMMAND --help` shows a
command's options, defaults and examples; docs/ in the source tree has the rest.)";

// Sections of the man page beyond the commands' own help.
std::vector<neardup::ManSection> man_sections() {
  return {
      {"EXIT STATUS",
       "0 success.\n\n1 \"no\": compare found the pages are not near-duplicates; consume "
       "stopped before --count records came.\n\n"
       "2 usage, config or input error: an unknown command or option, a bad value, an invalid "
       "config file (the message names the key and line), an input file that cannot be opened, "
       "dedup input none of whose first lines is a page, or a Kafka topic the cluster lacks."
       "\n\n3 any other failure: the index cannot be opened or written, no Kafka broker "
       "answered, Kafka delivery failed, a read error."},
      {"FILES",
       "/etc/neardup/neardup.yaml: the daemon's configuration; any command that fingerprints "
       "takes it with --config.\n\n/var/lib/neardup: the daemon's index."},
      {"SEE ALSO", "neardupd(8); the documentation in /usr/share/doc/neardup/."},
  };
}

void register_generate(CLI::App& root, neardup::cli::CommandRegistry& registry) {
  auto kind = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>("-");
  CLI::App* sub = root.add_subcommand(
      "generate", "Print the man page (man) or the bash completion script (complete-bash)");
  sub->add_option("kind", *kind, "man or complete-bash")
      ->required()
      ->option_text("KIND")
      ->check(CLI::IsMember({"man", "complete-bash"}));
  sub->add_option("--out", *out, "write here instead of stdout")->option_text("FILE");
  neardup::set_examples(sub, {"neardup generate man | man -l -",
                              "neardup generate complete-bash > ~/.local/share/"
                              "bash-completion/completions/neardup"});
  registry.add(sub, [&root, kind, out]() {
    const std::string text =
        *kind == "man" ? neardup::render_man_page(root, "1", NEARDUP_VERSION, man_sections())
                       : neardup::render_bash_completion(root);
    if (*out == "-") {
      std::cout << text;
      return neardup::kExitOk;
    }
    std::ofstream file(*out, std::ios::binary | std::ios::trunc);
    if (!(file << text) || !file.flush()) {
      std::cerr << "neardup generate: " << *out << ": cannot write\n";
      return neardup::kExitFailure;
    }
    return neardup::kExitOk;
  });
}

}  // namespace

int main(int argc, char** argv) {
  using namespace neardup;
  using namespace neardup::cli;
  neardup::init_logging(neardup::LogLevel::kInfo);

  CLI::App app{"neardup: find near-duplicate web pages (SimHash and MinHash over the main text)",
               "neardup"};
  use_help_formatter(app);
  app.set_version_flag("--version", std::string("neardup ") + NEARDUP_VERSION);
  app.require_subcommand(1);

  CommandRegistry registry;
  register_fingerprint(app, registry);
  register_extract(app, registry);
  register_compare(app, registry);
  register_decode(app, registry);
  register_dedup(app, registry);
  register_stats(app, registry);
  register_boilerplate(app, registry);
  register_queries(app, registry);
  register_bench(app, registry);
  register_broker(app, registry);
  register_produce(app, registry);
  register_consume(app, registry);
  register_topics(app, registry);
  register_generate(app, registry);
  app.footer(kRootFooter);  // after the subcommands, which would inherit it
  for (CLI::App* sub : app.get_subcommands({})) {
    const std::string& name = sub->get_name();
    if (name == "broker" || name == "produce" || name == "consume" || name == "topics") {
      sub->group("Kafka tools");
    } else if (name == "generate") {
      sub->group("Other");
    } else {
      sub->group("Commands");
    }
  }

  std::vector<std::string> args(argv + 1, argv + argc);
  if (auto checked = check_arguments(app, args); !checked) {
    std::cerr << checked.error() << "\n";
    return kExitUsage;
  }
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
