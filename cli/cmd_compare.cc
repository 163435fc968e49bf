// neardup compare A B: both fingerprints, the distance and the verdict (DESIGN.md §4).
#include <iostream>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "pipeline/fingerprint/fingerprint.h"
#include "pipeline/pipeline.h"

namespace neardup::cli {

void register_compare(CLI::App& root, CommandRegistry& registry) {
  struct Options {
    std::string a, b;
    std::string config_path;
    std::string content_type;
  };
  auto options = std::make_shared<Options>();
  CLI::App* sub = root.add_subcommand(
      "compare", "Compare two pages; exit 0 if near-duplicates at dedup.max_distance, 1 if not");
  sub->add_option("A", options->a, "first HTML file")->required();
  sub->add_option("B", options->b, "second HTML file")->required();
  sub->add_option("--config", options->config_path, "YAML config (defaults when omitted)");
  sub->add_option("--content-type", options->content_type, "HTTP Content-Type to assume");
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
      auto body = read_file(*paths[i]);
      if (!body) {
        std::cerr << "neardup compare: " << body.error() << "\n";
        return kExitFailure;
      }
      pages[i] = fingerprint_page(*body, options->content_type, *config);
      nlohmann::json side{{"file", *paths[i]}, {"features", pages[i].feature_count}};
      if (pages[i].skip) {
        side["status"] = "skipped";
        side["reason"] = pages[i].skip->reason;
      } else {
        side["status"] = "fingerprinted";
        side["fingerprint"] = fingerprint_hex(pages[i].fingerprint);
      }
      out[i == 0 ? "a" : "b"] = side;
    }
    out["scheme"] = scheme_id(*config);
    out["max_distance"] = config->dedup.max_distance;
    if (pages[0].skip || pages[1].skip) {
      out["verdict"] = "not_comparable";
      print_json_line(out);
      return kExitNo;
    }
    int distance = hamming_distance(pages[0].fingerprint, pages[1].fingerprint);
    bool near = distance <= static_cast<int>(config->dedup.max_distance);
    out["distance"] = distance;
    out["verdict"] = near ? "near_duplicate" : "different";
    print_json_line(out);
    return near ? kExitOk : kExitNo;
  });
}

}  // namespace neardup::cli
