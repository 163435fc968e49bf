// neardup extract FILE|DIR...: the denoised main text of each HTML file (docs/cli.md).
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "common/help.h"
#include "pipeline/decode/decode.h"
#include "pipeline/denoise/denoise.h"
#include "pipeline/features/features.h"
#include "pipeline/passages/passages.h"

namespace neardup::cli {

namespace {

struct ExtractOptions : InputFilesOptions {
  bool drop_seen_paragraphs = false;
};

}  // namespace

void register_extract(CLI::App& root, CommandRegistry& registry) {
  auto options = std::make_shared<ExtractOptions>();
  CLI::App* sub = root.add_subcommand("extract", "Print the main text of HTML files as JSON lines");
  add_input_files_options(sub, *options, "HTML files or directories of them");
  sub->add_flag("--drop-seen-paragraphs", options->drop_seen_paragraphs,
                "leave out of each text the paragraphs an earlier file of the run already had "
                "(containment.paragraph_tokens tokens or more, compared by their words), and say "
                "how many (dropped_paragraphs, dropped_bytes); a paragraph's first occurrence is "
                "kept");
  set_examples(sub, {"neardup extract samples/pages/a.html",
                     "neardup extract samples/pages | jq -r .title",
                     "neardup extract --drop-seen-paragraphs crawl/ > corpus.jsonl"});
  registry.add(sub, [options]() {
    std::unordered_set<std::uint64_t> seen;  // the paragraphs of the files before
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
      if (options->drop_seen_paragraphs) {
        Config tracked = config;
        tracked.containment.enabled = true;
        const std::string text = line["text"].get<std::string>();
        const Passages passages = passages_of(
            hash_tokens(text, config.features, config.fingerprint.seed), tracked);
        KeptText kept = drop_seen_paragraphs(text, passages, seen);
        line["text"] = std::move(kept.text);
        line["dropped_paragraphs"] = kept.dropped_paragraphs;
        line["dropped_bytes"] = kept.dropped_bytes;
      }
      if (main_text.fell_back) line["fallback"] = main_text.fallback_reason;
      print_json_line(line);
    });
  });
}

}  // namespace neardup::cli
