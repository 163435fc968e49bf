// neardup compare A B: the verdict, and both pages' fingerprints, the SimHash distance and the
// MinHash similarity behind it: near-duplicates when the distance is within dedup.max_distance
// or the sketches share an LSH band at dedup.min_similarity or above (the index's rule). With
// --explain, also what the two main texts share (pipeline/explain.h).
#include <iostream>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/human_text.h"
#include "common/help.h"
#include "pipeline/compare.h"
#include "pipeline/explain.h"
#include "pipeline/fingerprint/fingerprint.h"
#include "pipeline/pipeline.h"

namespace neardup::cli {
namespace {

nlohmann::json position_json(const TextPosition& at) {
  return {{"paragraph", at.paragraph}, {"word", at.word}};
}

// compare's "explain" object (docs/cli.md): positions 0-based, as the text counts them.
nlohmann::json explanation_json(const Explanation& e) {
  nlohmann::json paragraphs = nlohmann::json::array(), runs = nlohmann::json::array();
  for (const SharedParagraph& p : e.paragraphs) {
    paragraphs.push_back({{"a", position_json(p.a)}, {"b", position_json(p.b)},
                          {"words", p.words}, {"text", p.text}});
  }
  for (const SharedRun& r : e.runs) {
    runs.push_back({{"a", position_json(r.a)}, {"b", position_json(r.b)},
                    {"words", r.words}, {"text", r.text}});
  }
  return {{"words", {{"a", e.words_a}, {"b", e.words_b}}},
          {"covered", {{"a", e.covered_a}, {"b", e.covered_b}}},
          {"paragraphs_shared", e.paragraphs_shared},
          {"paragraphs", std::move(paragraphs)},
          {"runs", std::move(runs)}};
}

}  // namespace

void register_compare(CLI::App& root, CommandRegistry& registry) {
  struct Options {
    std::string a, b;
    std::string config_path;
    std::string content_type;
    OutputOptions output;
    bool sketches = false;
    bool explain = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* sub = root.add_subcommand(
      "compare",
      "Compare two pages; exit 0 if near-duplicates (SimHash within dedup.max_distance, or "
      "MinHash sharing a band at dedup.min_similarity), 1 if not");
  sub->add_option("A", options->a, "first HTML file")->required()->option_text("A");
  sub->add_option("B", options->b, "second HTML file")->required()->option_text("B");
  add_config_option(sub, options->config_path);
  sub->add_option("--content-type", options->content_type, "HTTP Content-Type to assume")
      ->option_text("TYPE");
  add_output_options(sub, options->output);
  sub->add_flag("--sketches", options->sketches, "also print both MinHash sketches (hex)");
  sub->add_flag("--explain", options->explain,
                "also say what the two main texts share: the paragraphs both hold and the longest "
                "runs of 8 or more words, with their places in each text");
  set_examples(sub, {"neardup compare samples/pages/a.html samples/pages/b.html && echo same",
                     "neardup compare --config strict.yaml old.html new.html",
                     "neardup compare --explain old.html new.html",
                     "neardup compare --json a.html b.html | jq .distance"});
  registry.add(sub, [options]() {
    auto config = load_config_or_defaults(options->config_path);
    if (!config) {
      std::cerr << "neardup compare: " << config.error() << "\n";
      return kExitUsage;
    }
    nlohmann::json out;
    PageFingerprint pages[2];
    const std::string* paths[2] = {&options->a, &options->b};
    for (int i = 0; i < 2; ++i) {
      auto body = read_file(*paths[i], config->input.max_body_bytes);
      if (!body) {
        std::cerr << "neardup compare: " << body.error() << "\n";
        return kExitUsage;
      }
      pages[i] = fingerprint_page(*body, options->content_type, *config,
                                  {.keep_text = options->explain});
      nlohmann::json side{{"file", *paths[i]}, {"features", pages[i].feature_count}};
      if (pages[i].skip) {
        side["status"] = "skipped";
        side["reason"] = pages[i].skip->reason;
      } else {
        side["status"] = "fingerprinted";
        side["fingerprint"] = fingerprint_hex(pages[i].fingerprint);
        if (options->sketches && !pages[i].sketch.empty()) {
          side["minhash"] = sketch_hex(pages[i].sketch);
        }
      }
      out[i == 0 ? "a" : "b"] = side;
    }
    out["scheme"] = scheme_id(*config);
    out["max_distance"] = config->dedup.max_distance;
    const auto print = [&] {
      if (options->output.format() == OutputFormat::kJson) {
        print_json_line(out);
      } else {
        print_text(compare_text(out));
      }
    };
    if (pages[0].skip || pages[1].skip) {
      out["verdict"] = "not_comparable";
      print();
      return kExitNo;
    }
    const Comparison comparison = compare_pages(pages[0], pages[1], *config);
    out["distance"] = comparison.distance;
    if (comparison.similarity) {
      out["min_similarity"] = config->dedup.min_similarity;
      out["similarity"] = *comparison.similarity;
      out["shares_band"] = comparison.shares_band;
    }
    if (comparison.a_in_b) {
      out["containment"] = {{"a_in_b", *comparison.a_in_b},
                            {"b_in_a", *comparison.b_in_a},
                            {"min_containment", config->dedup.min_containment},
                            {"paragraphs_shared", comparison.paragraphs_shared}};
      if (!comparison.contained().empty()) out["contained"] = comparison.contained();
    }
    const bool near = comparison.near_duplicate();
    out["verdict"] = near ? "near_duplicate" : "different";
    if (near) out["method"] = comparison.method();
    if (options->explain) {
      out["explain"] = explanation_json(
          explain_texts(pages[0].text, pages[1].text, config->features, ExplainOptions{}));
    }
    print();
    return near ? kExitOk : kExitNo;
  });
}

}  // namespace neardup::cli
