// The questions to an index (docs/cli.md#questions-to-the-index): neardup lookup, show and
// clusters read a store without changing it, beside a process that writes to it; neardup forget
// removes pages from it, and neardup drop-scheme a retired scheme's columns.
#include <iostream>
#include <memory>
#include <set>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/human_text.h"
#include "cli/line_reader.h"
#include "cli/progress.h"
#include "common/help.h"
#include "message/answers.h"
#include "message/processing.h"
#include "pipeline/pipeline.h"
#include "store/index.h"

namespace neardup::cli {
namespace {

constexpr std::size_t kDefaultMaxMembers = 1000;

void add_store_option(CLI::App* sub, std::string& store) {
  sub->add_option("--store", store, "index directory (read, never created)")
      ->required()
      ->option_text("DIR");
}

void add_max_members_option(CLI::App* sub, std::size_t& max_members) {
  sub->add_option("--max-members", max_members,
                  "list at most this many members of a cluster (size counts them all)")
      ->check(CLI::PositiveNumber)
      ->option_text("N");
}

// Warns when pages of `scheme` were never stored: every lookup would then say unique.
void warn_unknown_scheme(Index& index, const std::string& scheme) {
  IndexStats stats = index.stats();
  if (stats.scheme(scheme) != nullptr) return;
  std::string known;
  for (const auto& s : stats.schemes) known += (known.empty() ? "" : ", ") + s.id;
  std::cerr << "neardup lookup: the store holds no page of scheme " << scheme << " (it holds "
            << (known.empty() ? "none" : known)
            << "): every page will be unique; pass --config with the settings the store was "
               "written with\n";
}

void register_lookup(CLI::App& root, CommandRegistry& registry) {
  struct Options {
    std::string store, jsonl;
    InputFilesOptions files;
    OutputOptions output;
    ProgressMode progress = ProgressMode::kAuto;
  };
  auto options = std::make_shared<Options>();
  CLI::App* sub = root.add_subcommand(
      "lookup", "Would these pages be duplicates, and of what? Asks the index, inserts nothing");
  add_store_option(sub, options->store);
  sub->add_option("files", options->files.files, "HTML files, directories of them, or - for stdin")
      ->option_text("FILE");
  add_config_option(sub, options->files.config_path);
  sub->add_option("--content-type", options->files.content_type,
                  "HTTP Content-Type to assume for every input file")
      ->option_text("TYPE");
  sub->add_option("--jsonl", options->jsonl, "JSONL pages (gzip or plain; - for stdin) instead of files")
      ->option_text("FILE");
  add_output_options(sub, options->output);
  add_progress_options(sub, options->progress);
  sub->footer(
      "One line per page: what it would be tagged (unique, duplicate of what, found by which\n"
      "signature, or skipped), as text or as JSON {\"file\" (or \"id\", \"url\"),\n"
      "\"neardup\": {...}} with the `neardup` field the page would get (docs/records.md);\n"
      "nothing is inserted. Pages are compared with stored pages of their scheme: pass the\n"
      "--config the store was written with. With --jsonl, progress goes to stderr on a terminal.");
  set_examples(sub, {"neardup lookup --store /var/lib/neardup page.html",
                     "neardup lookup --store idx --jsonl new.jsonl.gz | jq -c .neardup.status"});
  registry.add(sub, [options]() {
    if (options->files.files.empty() == options->jsonl.empty()) {
      std::cerr << "neardup lookup: give page files or --jsonl FILE (one of them)\n";
      return kExitUsage;
    }
    auto index = open_read_only("lookup", options->store);
    if (!index) return kExitFailure;
    const OutputFormat format = options->output.format();
    int exit_code = kExitOk;
    auto answer = [&](const ProcessedRecord& record) -> StoreResult<LookupAnswer> {
      auto found = lookup_record(*index, record);
      if (!found) {
        std::cerr << "neardup lookup: " << found.error().message << "\n";
        exit_code = kExitFailure;
      }
      return found;
    };
    if (options->jsonl.empty()) {
      bool warned = false;
      int visited = visit_input_files(
          "lookup", options->files,
          [&](const Config& config, const std::string& file, const std::string& body) {
            if (exit_code != kExitOk) return;
            ProcessedRecord record =
                process_html(body, options->files.content_type, file,
                             std::make_shared<const Config>(config), scheme_id(config));
            if (!warned) warn_unknown_scheme(*index, record.scheme);
            warned = true;
            auto found = answer(record);
            if (!found) return;
            if (format == OutputFormat::kJson) {
              print_json_line({{"file", file}, {"neardup", tag_to_json(found->tag)}});
            } else {
              print_text(lookup_text(file, tag_to_json(found->tag)));
            }
          });
      return visited != kExitOk ? visited : exit_code;
    }
    auto config = load_config_or_defaults(options->files.config_path);
    if (!config) {
      std::cerr << "neardup lookup: " << config.error() << "\n";
      return kExitUsage;
    }
    auto reader = LineReader::open(options->jsonl, config->input.max_record_bytes);
    if (!reader) {
      std::cerr << "neardup lookup: " << reader.error() << "\n";
      return kExitUsage;
    }
    const auto shared = std::make_shared<const Config>(*config);
    const std::string scheme = scheme_id(*config);
    warn_unknown_scheme(*index, scheme);
    Progress progress(for_streamed_results(options->progress), "neardup lookup", (*reader)->size(),
                      "pages");
    std::string line;
    std::uint64_t lines = 0;
    while (exit_code == kExitOk && (*reader)->next(line)) {
      ++lines;
      const std::uint64_t over_long = (*reader)->over_long();
      ProcessedRecord record = over_long > 0 ? process_unheld_record(over_long, shared, scheme)
                                             : process_record(line, shared, scheme);
      auto found = answer(record);
      progress.update((*reader)->position(), lines, [&] { return grouped(lines) + " pages"; });
      if (!found) continue;
      const nlohmann::json json = lookup_json(record, *found);
      if (format == OutputFormat::kJson) {
        print_json_line(json);
      } else if (found->dead_letter) {
        print_text(not_a_page_text(lines, json));
      } else {
        print_text(lookup_text(record.page->id, json["neardup"]));
      }
    }
    progress.clear();
    if (!(*reader)->error().empty()) {
      std::cerr << "neardup lookup: " << (*reader)->error() << "\n";
      return kExitFailure;
    }
    return exit_code;
  });
}

void register_show(CLI::App& root, CommandRegistry& registry) {
  struct Options {
    std::string store;
    std::vector<std::string> ids;
    std::size_t max_members = kDefaultMaxMembers;
    OutputOptions output;
    bool explain = false;
    std::string with;
  };
  auto options = std::make_shared<Options>();
  CLI::App* sub = root.add_subcommand(
      "show", "A stored page: fingerprint, scheme, first seen, verdict, and its cluster");
  add_store_option(sub, options->store);
  sub->add_option("ids", options->ids, "page ids")->required()->option_text("ID");
  add_max_members_option(sub, options->max_members);
  add_output_options(sub, options->output);
  sub->add_flag("--explain", options->explain,
                "why the page matched (or not) another stored page: the SimHash distance block "
                "by block, the tables and MinHash bands that find the pair, both verdicts");
  sub->add_option("--with", options->with,
                  "with --explain: the page to compare with (default: the page it matched when "
                  "stored, else its cluster's first page)")
      ->option_text("ID");
  sub->footer(
      "Per id, the page and its cluster, as text or as one JSON line\n"
      "{\"page\": {...}, \"cluster\": {\"root\", \"size\", \"members\"}}.\n"
      "With --explain, per id {\"a\", \"b\", \"simhash\", \"minhash\", \"stored\"} instead\n"
      "(docs/cli.md#show): from the stored signatures; the index keeps no text, so what two\n"
      "texts share is `neardup compare --explain` on the pages.\n"
      "Exit 1 when an id has no live page (it was never stored, was forgotten or expired).");
  set_examples(sub, {"neardup show --store /var/lib/neardup p00017",
                     "neardup show --store idx a-1 | jq -r '.cluster.members[].id'",
                     "neardup show --store idx p00017 --explain",
                     "neardup show --store idx p00017 --explain --with p00003 --json"});
  registry.add(sub, [options]() {
    auto index = open_read_only("show", options->store);
    if (!index) return kExitFailure;
    if (!options->with.empty() && !options->explain) {
      std::cerr << "neardup show: --with needs --explain\n";
      return kExitUsage;
    }
    int exit_code = kExitOk;
    for (const std::string& id : options->ids) {
      if (options->explain) {
        auto explained = explain_stored(*index, id, options->with);
        if (!explained && explained.error().code == StoreError::Code::kNotFound) {
          std::cerr << "neardup show: " << explained.error().message << "\n";
          exit_code = kExitNo;
          continue;
        }
        if (!explained) {
          std::cerr << "neardup show: " << explained.error().message << "\n";
          return kExitFailure;
        }
        if (options->output.format() == OutputFormat::kJson) {
          print_json_line(*explained);
        } else {
          print_text(stored_explanation_text(*explained));
        }
        continue;
      }
      auto described = describe_page(*index, id, options->max_members);
      if (!described) {
        std::cerr << "neardup show: " << described.error().message << "\n";
        return kExitFailure;
      }
      if (!*described) {
        std::cerr << "neardup show: " << id << ": no live page stored under this id\n";
        exit_code = kExitNo;
        continue;
      }
      if (options->output.format() == OutputFormat::kJson) {
        print_json_line(**described);
      } else {
        print_text(page_text(**described));
      }
    }
    return exit_code;
  });
}

void register_clusters(CLI::App& root, CommandRegistry& registry) {
  struct Options {
    std::string store, scheme;
    std::size_t min_size = 2;
    std::size_t max_members = kDefaultMaxMembers;
    ProgressMode progress = ProgressMode::kAuto;
  };
  auto options = std::make_shared<Options>();
  CLI::App* sub = root.add_subcommand(
      "clusters", "Every cluster of near-duplicates as a JSON line, streamed from the index");
  add_store_option(sub, options->store);
  sub->add_option("--min-size", options->min_size, "only clusters of at least N live pages (1: also pages without copies)")
      ->check(CLI::PositiveNumber)
      ->option_text("N");
  sub->add_option("--scheme", options->scheme, "only this scheme's clusters")->option_text("S");
  add_max_members_option(sub, options->max_members);
  add_progress_options(sub, options->progress);
  sub->footer(
      "Lines {\"root\", \"scheme\", \"size\", \"members\": [{\"id\", \"first_seen\"}]}\n"
      "in order of their first pages, streamed in bounded memory; progress (on a terminal) and\n"
      "a summary go to stderr.");
  set_examples(sub, {"neardup clusters --store /var/lib/neardup --min-size 10",
                     "neardup clusters --store idx | jq -s 'group_by(.size) | map([.[0].size, length])'"});
  registry.add(sub, [options]() {
    auto index = open_read_only("clusters", options->store);
    if (!index) return kExitFailure;
    std::uint64_t clusters = 0, pages = 0;
    // Clusters come in order of their first pages' document numbers: how far the walk is.
    Progress progress(for_streamed_results(options->progress), "neardup clusters",
                      index->stats().last_doc, "clusters");
    auto walked = index->for_each_cluster(options->min_size, options->scheme,
                                          [&](const Cluster& cluster) {
                                            ++clusters;
                                            pages += cluster.members.size();
                                            print_json_line(cluster_json(cluster, options->max_members));
                                            progress.update(cluster.root_doc, clusters, [&] {
                                              return grouped(clusters) + " clusters";
                                            });
                                            return true;
                                          });
    progress.clear();
    if (!walked) {
      std::cerr << "neardup clusters: " << walked.error().message << "\n";
      return kExitFailure;
    }
    std::cerr << "neardup clusters: " << clusters << " clusters of at least " << options->min_size
              << " pages, " << pages << " pages in them\n";
    return kExitOk;
  });
}

// Opens a store for writing with the design it was created with; prints the error and returns
// null when it cannot. `stats`, when given, receives the store's statistics as read before.
std::unique_ptr<Index> open_for_writing(std::string_view command, const std::string& path,
                                        IndexStats* stats = nullptr) {
  StoreConfig config;
  config.path = path;
  {
    auto stored = open_read_only(command, path);
    if (!stored) return nullptr;
    IndexStats read = stored->stats();
    config.design_k = read.design_k;
    config.tables = read.tables;
    if (stats != nullptr) *stats = std::move(read);
  }
  auto index = Index::open(config);
  if (!index) {
    std::cerr << "neardup " << command << ": " << index.error().message << "\n";
    return nullptr;
  }
  return std::move(*index);
}

void register_forget(CLI::App& root, CommandRegistry& registry) {
  struct Options {
    std::string store;
    std::vector<std::string> ids;
  };
  auto options = std::make_shared<Options>();
  CLI::App* sub = root.add_subcommand(
      "forget", "Remove pages from an index: they are no longer matched or shown");
  sub->add_option("--store", options->store, "index directory")->required()->option_text("DIR");
  sub->add_option("ids", options->ids, "page ids")->required()->option_text("ID");
  sub->footer(
      "Later copies of a forgotten page no longer match it (they may still match its other\n"
      "copies). Its index entries are dropped by the next merges. Prints how many ids had a page.");
  set_examples(sub, {"neardup forget --store /var/lib/neardup p00017 p00018"});
  registry.add(sub, [options]() {
    auto index = open_for_writing("forget", options->store);
    if (!index) return kExitFailure;
    std::set<std::string> unique(options->ids.begin(), options->ids.end());
    std::vector<std::string> ids(unique.begin(), unique.end());
    auto forgotten = index->forget(ids);
    if (!forgotten) {
      std::cerr << "neardup forget: " << forgotten.error().message << "\n";
      return kExitFailure;
    }
    std::cout << "forgot " << *forgotten << " of " << ids.size() << " ids\n";
    return kExitOk;
  });
}

void register_drop_scheme(CLI::App& root, CommandRegistry& registry) {
  struct Options {
    std::string store;
    std::string scheme;
    bool force = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* sub = root.add_subcommand(
      "drop-scheme", "Delete a retired fingerprint scheme's index columns from a store");
  sub->add_option("--store", options->store, "index directory")->required()->option_text("DIR");
  sub->add_option("scheme", options->scheme, "the scheme id, as `neardup stats` lists it")
      ->required()
      ->option_text("SCHEME");
  sub->add_flag("--force", options->force,
                "drop the newest scheme too (the one neardupd most likely uses now)");
  sub->footer(
      "A scheme's pages are matched only against pages of the same scheme; once the fingerprint\n"
      "settings have changed for good, the old scheme's columns only take disk. Its pages stay\n"
      "(ids, stored verdicts, clusters); they are no longer matched. A page of that scheme\n"
      "applied later starts it anew. Needs the store's writer lock: stop neardupd first.");
  set_examples(sub, {"neardup drop-scheme --store /var/lib/neardup s-5d0e31aa"});
  registry.add(sub, [options]() {
    IndexStats stats;
    auto index = open_for_writing("drop-scheme", options->store, &stats);
    if (!index) return kExitFailure;
    if (!options->force && !stats.schemes.empty() && stats.schemes.back().id == options->scheme) {
      std::cerr << "neardup drop-scheme: " << options->scheme << " is the newest scheme of "
                << options->store
                << ", most likely the one neardupd uses now; add --force to drop it anyway\n";
      return kExitUsage;
    }
    auto dropped = index->drop_scheme(options->scheme);
    if (!dropped) {
      std::cerr << "neardup drop-scheme: " << dropped.error().message << "\n";
      return kExitFailure;
    }
    std::cout << "dropped scheme " << options->scheme << ": " << dropped->columns << " columns, "
              << dropped->runs << " runs, " << dropped->entries << " entries\n";
    return kExitOk;
  });
}

}  // namespace

void register_queries(CLI::App& root, CommandRegistry& registry) {
  register_lookup(root, registry);
  register_show(root, registry);
  register_clusters(root, registry);
  register_forget(root, registry);
  register_drop_scheme(root, registry);
}

}  // namespace neardup::cli
