// neardup extract FILE|DIR...: the denoised main text of each HTML file (DESIGN.md §4).
#include <iostream>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "pipeline/decode/decode.h"
#include "pipeline/denoise/denoise.h"

namespace neardup::cli {

void register_extract(CLI::App& root, CommandRegistry& registry) {
  struct Options {
    std::vector<std::string> files;
    std::string config_path;
    std::string content_type;
  };
  auto options = std::make_shared<Options>();
  CLI::App* sub = root.add_subcommand("extract", "Print the main text of HTML files as JSON lines");
  sub->add_option("files", options->files, "HTML files or directories of them")->required();
  sub->add_option("--config", options->config_path, "YAML config (defaults when omitted)");
  sub->add_option("--content-type", options->content_type,
                  "HTTP Content-Type to assume for every input");
  registry.add(sub, [options]() {
    auto config = load_config_or_defaults(options->config_path);
    if (!config) {
      std::cerr << "neardup extract: " << config.error() << "\n";
      return kExitUsage;
    }
    auto files = expand_html_inputs(options->files);
    if (!files) {
      std::cerr << "neardup extract: " << files.error() << "\n";
      return kExitUsage;
    }
    int exit_code = kExitOk;
    for (const auto& file : *files) {
      nlohmann::json line{{"file", file}};
      auto body = read_file(file);
      if (!body) {
        std::cerr << "neardup extract: " << body.error() << "\n";
        line["status"] = "error";
        line["error"] = body.error();
        print_json_line(line);
        exit_code = kExitFailure;
        continue;
      }
      auto decoded = decode(*body, options->content_type, config->decode);
      if (!decoded) {
        line["status"] = "skipped";
        line["reason"] = decoded.error().reason;
        print_json_line(line);
        continue;
      }
      MainText main_text = denoise(decoded->text, options->content_type, config->denoise);
      line["status"] = "extracted";
      line["charset"] = decoded->charset;
      line["title"] = main_text.title;
      line["text"] = joined_text(main_text);
      if (main_text.fell_back) line["fallback"] = main_text.fallback_reason;
      print_json_line(line);
    }
    return exit_code;
  });
}

}  // namespace neardup::cli
