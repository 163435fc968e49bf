// neardup fingerprint [FILE|-]...: one JSON line per input (docs/cli.md).
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "common/help.h"
#include "pipeline/fingerprint/fingerprint.h"
#include "pipeline/pipeline.h"

namespace neardup::cli {

void register_fingerprint(CLI::App& root, CommandRegistry& registry) {
  auto options = std::make_shared<InputFilesOptions>();
  CLI::App* sub = root.add_subcommand("fingerprint", "Fingerprint pages: one JSON line each");
  add_input_files_options(sub, *options, "HTML files, directories of them, or - for stdin");
  set_examples(sub, {"neardup fingerprint samples/pages",
                     "neardup fingerprint --config /etc/neardup/neardup.yaml page.html"});
  registry.add(sub, [options]() {
    return visit_input_files("fingerprint", *options, [&](const Config& config,
                                                          const std::string& file,
                                                          const std::string& body) {
      PageFingerprint page = fingerprint_page(body, options->content_type, config);
      nlohmann::json line{{"file", file}, {"status", page.skip ? "skipped" : "fingerprinted"}};
      if (!page.skip) line["fingerprint"] = fingerprint_hex(page.fingerprint);
      if (!page.sketch.empty()) line["minhash"] = sketch_hex(page.sketch);
      if (!page.sketch_upper.empty()) line["minhash_upper"] = sketch_hex(page.sketch_upper);
      line["scheme"] = scheme_id(config);
      if (!page.charset.empty()) line["charset"] = page.charset;
      line["features"] = page.feature_count;
      if (!page.skip && config.containment.enabled) {
        line["tokens"] = page.passages.tokens;
        line["anchors"] = page.passages.anchors.size();
        line["paragraphs"] = page.passages.paragraphs.size();
      }
      if (page.skip) line["reason"] = page.skip->reason;
      print_json_line(line);
    });
  });
}

}  // namespace neardup::cli
