// neardup extract FILE|DIR...: the denoised main text of each HTML file (docs/cli.md).
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "common/help.h"
#include "pipeline/decode/decode.h"
#include "pipeline/denoise/denoise.h"

namespace neardup::cli {

void register_extract(CLI::App& root, CommandRegistry& registry) {
  auto options = std::make_shared<InputFilesOptions>();
  CLI::App* sub = root.add_subcommand("extract", "Print the main text of HTML files as JSON lines");
  add_input_files_options(sub, *options, "HTML files or directories of them");
  set_examples(sub, {"neardup extract samples/pages/a.html",
                     "neardup extract samples/pages | jq -r .title"});
  registry.add(sub, [options]() {
    return visit_input_files("extract", *options, [&](const Config& config,
                                                      const std::string& file,
                                                      const std::string& body) {
      nlohmann::json line{{"file", file}};
      auto decoded = decode(body, options->content_type, config.decode);
      if (!decoded) {
        line["status"] = "skipped";
        line["reason"] = decoded.error().reason;
        print_json_line(line);
        return;
      }
      MainText main_text = denoise(decoded->text, options->content_type, config.denoise);
      line["status"] = "extracted";
      line["charset"] = decoded->charset;
      line["title"] = main_text.title;
      line["text"] = joined_text(main_text);
      if (main_text.fell_back) line["fallback"] = main_text.fallback_reason;
      print_json_line(line);
    });
  });
}

}  // namespace neardup::cli
