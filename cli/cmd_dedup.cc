// neardup dedup --store DIR [--in FILE] [--out FILE] [--dead-letter FILE]: the whole pipeline
// and the index over JSONL pages (DESIGN.md §3, §4). Pure stages run on all cores over a chunk
// of lines; the index applies the chunk in input order in one transaction.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "common/parallel.h"
#include "message/processing.h"
#include "store/index.h"

namespace neardup::cli {
namespace {

struct DedupCounts {
  std::uint64_t pages = 0, unique = 0, duplicate = 0, skipped = 0, bad = 0;
};

struct Line {
  std::uint64_t number = 0;
  std::string text;
  ProcessedRecord record;
};

void print_progress(const DedupCounts& counts, double seconds, bool final_line) {
  std::fprintf(stderr, "\r%llu pages  %llu unique  %llu duplicate  %llu skipped  %llu bad  %.0f pages/s%s",
               static_cast<unsigned long long>(counts.pages),
               static_cast<unsigned long long>(counts.unique),
               static_cast<unsigned long long>(counts.duplicate),
               static_cast<unsigned long long>(counts.skipped),
               static_cast<unsigned long long>(counts.bad),
               seconds > 0 ? counts.pages / seconds : 0.0, final_line ? "\n" : "");
}

}  // namespace

void register_dedup(CLI::App& root, CommandRegistry& registry) {
  struct Options {
    std::string store, config_path, in = "-", out = "-", dead_letter;
  };
  auto options = std::make_shared<Options>();
  CLI::App* sub = root.add_subcommand(
      "dedup", "Tag JSONL pages unique/duplicate/skipped through the index, in input order");
  sub->add_option("--store", options->store, "index directory (created if missing)")->required();
  sub->add_option("--config", options->config_path, "YAML config (defaults when omitted)");
  sub->add_option("--in", options->in, "JSONL pages (default: stdin)");
  sub->add_option("--out", options->out, "tagged JSONL (default: stdout)");
  sub->add_option("--dead-letter", options->dead_letter, "write unreadable lines here");
  registry.add(sub, [options]() {
    auto config = load_config_or_defaults(options->config_path);
    if (!config) {
      std::cerr << "neardup dedup: " << config.error() << "\n";
      return kExitUsage;
    }
    config->store.path = options->store;
    const auto shared_config = std::make_shared<const Config>(*config);
    auto index = Index::open(config->store);
    if (!index) {
      std::cerr << "neardup dedup: " << index.error().message << "\n";
      return kExitFailure;
    }

    std::ifstream in_file;
    std::istream* in = &std::cin;
    if (options->in != "-") {
      in_file.open(options->in, std::ios::binary);
      if (!in_file) {
        std::cerr << "neardup dedup: " << options->in << ": cannot open for reading\n";
        return kExitUsage;
      }
      in = &in_file;
    }
    std::FILE* out = stdout;
    if (options->out != "-") {
      out = std::fopen(options->out.c_str(), "wb");
      if (!out) {
        std::cerr << "neardup dedup: " << options->out << ": cannot open for writing\n";
        return kExitUsage;
      }
    }
    std::FILE* dead = nullptr;
    if (!options->dead_letter.empty()) {
      dead = std::fopen(options->dead_letter.c_str(), "wb");
      if (!dead) {
        std::cerr << "neardup dedup: " << options->dead_letter << ": cannot open for writing\n";
        return kExitUsage;
      }
    }

    const std::string scheme = scheme_id(*config);
    const bool progress = isatty(STDERR_FILENO);
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    DedupCounts counts;
    std::uint64_t line_number = 0;
    std::vector<Line> chunk;
    const std::size_t chunk_size = std::max<std::size_t>(config->pipeline.batch_size, 1);
    int exit_code = kExitOk;

    while (exit_code == kExitOk) {
      chunk.clear();
      std::string text;
      while (chunk.size() < chunk_size && std::getline(*in, text)) {
        ++line_number;
        if (text.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank line
        chunk.push_back(Line{.number = line_number, .text = std::move(text)});
      }
      if (chunk.empty()) break;

      parallel_for(chunk.size(), config->pipeline.threads, [&](std::size_t i) {
        chunk[i].record = process_record(chunk[i].text, shared_config, scheme);
      });

      std::vector<IndexItem> items;
      items.reserve(chunk.size());
      for (const Line& line : chunk) items.push_back(index_item(line.record));
      auto verdicts = (*index)->apply(items);
      if (!verdicts) {
        std::cerr << "neardup dedup: index: " << verdicts.error().message << "\n";
        exit_code = kExitFailure;
        break;
      }
      for (std::size_t i = 0; i < chunk.size(); ++i) {
        const Line& line = chunk[i];
        Outcome outcome = render_outcome(line.record, (*verdicts)[i]);
        if (outcome.dead_letter) {
          ++counts.bad;
          std::cerr << "neardup dedup: line " << line.number << ": " << outcome.error.code << ": "
                    << outcome.error.detail << "\n";
          if (dead) std::fprintf(dead, "%s\n", line.text.c_str());
          continue;
        }
        ++counts.pages;
        if (outcome.tag.status == "unique") {
          ++counts.unique;
        } else if (outcome.tag.status == "duplicate") {
          ++counts.duplicate;
        } else {
          ++counts.skipped;
        }
        outcome.value += '\n';
        std::fwrite(outcome.value.data(), 1, outcome.value.size(), out);
      }
      if (progress) print_progress(counts, elapsed(), false);
    }
    if (std::fflush(out) != 0 || std::ferror(out)) {
      std::cerr << "neardup dedup: write error on " << options->out << "\n";
      exit_code = kExitFailure;
    }
    if (out != stdout) std::fclose(out);
    if (dead) std::fclose(dead);
    if (progress) std::fputc('\n', stderr);
    std::fprintf(stderr, "summary: ");
    print_progress(counts, elapsed(), true);
    return exit_code;
  });
}

}  // namespace neardup::cli
