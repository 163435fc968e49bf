// neardup decode FILE...: the decode stage alone: charset, how it was chosen, UTF-8 text.
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "common/help.h"
#include "pipeline/decode/decode.h"

namespace neardup::cli {

void register_decode(CLI::App& root, CommandRegistry& registry) {
  auto options = std::make_shared<InputFilesOptions>();
  CLI::App* sub =
      root.add_subcommand("decode", "Decode pages to UTF-8: charset, its source and the text");
  add_input_files_options(sub, *options, "files, directories of HTML files, or -");
  set_examples(sub, {"neardup decode samples/pages/a.html",
                     "curl -s https://example.org/ | neardup decode --content-type 'text/html; "
                     "charset=iso-8859-1' -"});
  registry.add(sub, [options]() {
    return visit_input_files("decode", *options, [&](const Config& config,
                                                     const std::string& file,
                                                     const std::string& body) {
      nlohmann::json line{{"file", file}};
      auto decoded = decode(body, options->content_type, config.decode);
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
    });
  });
}

}  // namespace neardup::cli
