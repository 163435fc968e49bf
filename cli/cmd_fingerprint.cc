// neardup fingerprint [FILE|-]...: one JSON line per input (DESIGN.md §4).
#include <iostream>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "pipeline/fingerprint/fingerprint.h"
#include "pipeline/pipeline.h"

namespace neardup::cli {

void register_fingerprint(CLI::App& root, CommandRegistry& registry) {
  struct Options {
    std::vector<std::string> files;
    std::string config_path;
    std::string content_type;
  };
  auto options = std::make_shared<Options>();
  CLI::App* sub = root.add_subcommand("fingerprint", "Fingerprint pages: one JSON line each");
  sub->add_option("files", options->files, "HTML files, directories of them, or - for stdin")
      ->required();
  sub->add_option("--config", options->config_path, "YAML config (defaults when omitted)");
  sub->add_option("--content-type", options->content_type,
                  "HTTP Content-Type to assume for every input");
  registry.add(sub, [options]() {
    auto config = load_config_or_defaults(options->config_path);
    if (!config) {
      std::cerr << "neardup fingerprint: " << config.error() << "\n";
      return kExitUsage;
    }
    auto files = expand_html_inputs(options->files);
    if (!files) {
      std::cerr << "neardup fingerprint: " << files.error() << "\n";
      return kExitUsage;
    }
    const std::string scheme = scheme_id(*config);
    int exit_code = kExitOk;
    for (const auto& file : *files) {
      nlohmann::json line{{"file", file}};
      auto body = read_file(file);
      if (!body) {
        std::cerr << "neardup fingerprint: " << body.error() << "\n";
        line["status"] = "error";
        line["error"] = body.error();
        print_json_line(line);
        exit_code = kExitFailure;
        continue;
      }
      PageFingerprint page = fingerprint_page(*body, options->content_type, *config);
      line["status"] = page.skip ? "skipped" : "fingerprinted";
      if (!page.skip) line["fingerprint"] = fingerprint_hex(page.fingerprint);
      line["scheme"] = scheme;
      if (!page.charset.empty()) line["charset"] = page.charset;
      line["features"] = page.feature_count;
      if (page.skip) line["reason"] = page.skip->reason;
      print_json_line(line);
    }
    return exit_code;
  });
}

}  // namespace neardup::cli
