// neardup decode FILE...: the decode stage alone: charset, how it was chosen, UTF-8 text.
#include <iostream>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "pipeline/decode/decode.h"

namespace neardup::cli {

void register_decode(CLI::App& root, CommandRegistry& registry) {
  struct Options {
    std::vector<std::string> files;
    std::string config_path;
    std::string content_type;
  };
  auto options = std::make_shared<Options>();
  CLI::App* sub =
      root.add_subcommand("decode", "Decode pages to UTF-8: charset, its source and the text");
  sub->add_option("files", options->files, "files, directories of HTML files, or -")->required();
  sub->add_option("--config", options->config_path, "YAML config (defaults when omitted)");
  sub->add_option("--content-type", options->content_type,
                  "HTTP Content-Type to assume for every input");
  registry.add(sub, [options]() {
    auto config = load_config_or_defaults(options->config_path);
    if (!config) {
      std::cerr << "neardup decode: " << config.error() << "\n";
      return kExitUsage;
    }
    auto files = expand_html_inputs(options->files);
    if (!files) {
      std::cerr << "neardup decode: " << files.error() << "\n";
      return kExitUsage;
    }
    int exit_code = kExitOk;
    for (const auto& file : *files) {
      nlohmann::json line{{"file", file}};
      auto body = read_file(file);
      if (!body) {
        std::cerr << "neardup decode: " << body.error() << "\n";
        exit_code = kExitFailure;
        continue;
      }
      auto decoded = decode(*body, options->content_type, config->decode);
      if (decoded) {
        line["status"] = "decoded";
        line["charset"] = decoded->charset;
        line["charset_source"] = decoded->charset_source;
        line["text"] = decoded->text;
      } else {
        line["status"] = "skipped";
        line["reason"] = decoded.error().reason;
      }
      print_json_line(line);
    }
    return exit_code;
  });
}

}  // namespace neardup::cli
