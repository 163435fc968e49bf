// neardup bench DIR [--threads N] [--repeat R]: pipeline throughput over a directory of HTML
// files, read into memory first so only the pipeline is timed. With one thread it also times
// each stage separately.
#include <algorithm>
#include <chrono>
#include <iostream>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "common/help.h"
#include "common/parallel.h"
#include "pipeline/decode/decode.h"
#include "pipeline/denoise/denoise.h"
#include "pipeline/features/features.h"
#include "pipeline/fingerprint/fingerprint.h"
#include "pipeline/pipeline.h"

namespace neardup::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

void register_bench(CLI::App& root, CommandRegistry& registry) {
  struct Options {
    std::vector<std::string> inputs;
    std::string config_path;
    unsigned threads = 1;
    unsigned repeat = 3;
  };
  auto options = std::make_shared<Options>();
  CLI::App* sub = root.add_subcommand("bench", "Time the pipeline over HTML files in memory");
  sub->add_option("inputs", options->inputs, "directories of HTML files, or files")
      ->required()
      ->option_text("FILE");
  add_config_option(sub, options->config_path);
  sub->add_option("--threads", options->threads, "worker threads (0: one per core)")
      ->option_text("N");
  sub->add_option("--repeat", options->repeat, "timed passes, 1..1000; the median is reported")
      ->option_text("N")
      ->check(CLI::Range(1u, 1000u));
  set_examples(sub, {"neardup bench samples/pages", "neardup bench --threads 0 --repeat 5 crawl/"});
  registry.add(sub, [options]() {
    auto config = load_config_or_defaults(options->config_path);
    if (!config) {
      std::cerr << "neardup bench: " << config.error() << "\n";
      return kExitUsage;
    }
    auto files = expand_html_inputs(options->inputs);
    if (!files) {
      std::cerr << "neardup bench: " << files.error() << "\n";
      return kExitUsage;
    }
    std::vector<std::string> pages;
    std::size_t bytes = 0;
    for (const auto& file : *files) {
      auto body = read_file(file);
      if (!body) {
        std::cerr << "neardup bench: " << body.error() << "\n";
        return kExitFailure;
      }
      bytes += body->size();
      pages.push_back(std::move(*body));
    }
    if (pages.empty()) {
      std::cerr << "neardup bench: no HTML files found\n";
      return kExitUsage;
    }
    const unsigned threads = resolve_threads(options->threads);
    std::vector<double> passes;
    std::size_t skipped = 0;
    for (unsigned pass = 0; pass < options->repeat; ++pass) {
      std::atomic<std::size_t> pass_skipped{0};
      auto start = Clock::now();
      parallel_for(pages.size(), threads, [&](std::size_t i) {
        if (fingerprint_page(pages[i], "", *config).skip) ++pass_skipped;
      });
      passes.push_back(seconds_since(start));
      skipped = pass_skipped;
    }
    const double wall = median(passes);
    const double mb = bytes / 1e6;
    nlohmann::json report{{"files", pages.size()},
                          {"bytes", bytes},
                          {"threads", threads},
                          {"repeat", options->repeat},
                          {"seconds_median", wall},
                          {"mb_per_s", mb / wall},
                          {"pages_per_s", pages.size() / wall},
                          {"skipped", skipped},
                          {"scheme", scheme_id(*config)}};
    if (threads == 1) {
      // Per-stage time over one more pass, calling the stages one by one.
      double t_decode = 0, t_denoise = 0, t_features = 0, t_fingerprint = 0;
      for (const auto& page : pages) {
        auto t0 = Clock::now();
        auto decoded = decode(page, "", config->decode);
        t_decode += seconds_since(t0);
        if (!decoded) continue;
        auto t1 = Clock::now();
        std::string text = joined_text(denoise(decoded->text, "", config->denoise));
        t_denoise += seconds_since(t1);
        auto t2 = Clock::now();
        auto features = extract_features(text, config->features, config->fingerprint.seed);
        t_features += seconds_since(t2);
        auto t3 = Clock::now();
        volatile std::uint64_t sink = simhash(features);
        (void)sink;
        t_fingerprint += seconds_since(t3);
      }
      report["stage_seconds"] = {{"decode", t_decode},
                                 {"denoise", t_denoise},
                                 {"features", t_features},
                                 {"fingerprint", t_fingerprint}};
    }
    std::cout << report.dump(2) << "\n";
    return kExitOk;
  });
}

}  // namespace neardup::cli
