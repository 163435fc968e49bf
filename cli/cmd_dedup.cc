// neardup dedup --store DIR [--in FILE | --warc FILE...] [--out FILE] [--dead-letter FILE]: the
// whole pipeline and the index over JSONL pages or WARC response records (docs/records.md,
// docs/cli.md). Pure stages run on all cores over chunks of records, up to two chunks ahead of
// the index, which applies each chunk in input order in one transaction while the next ones are
// fingerprinted; the last chunk is applied a slice (kSliceLines) at a time as it is ready.
//
// Offline defaults: gzip input is read as such (by its magic bytes); an input none of whose
// first kProbeLines lines is a page stops the run (exit 2) with what the input looks like; the
// index is not fsynced per batch unless --sync (an interrupted batch is simply run again).
//
// neardup learn --store DIR --config F [--in FILE | --warc FILE...]: the same reading and pure
// stages, and instead of the index's verdicts, what the config's scheme learns from the crawl
// (message/learning.h), learned from every page as from a new one and stored; no output.
#include <algorithm>
#include <cstdio>
#include <deque>
#include <iostream>
#include <span>
#include <utility>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/gather_writer.h"
#include "cli/line_reader.h"
#include "cli/progress.h"
#include "cli/record_input.h"
#include "common/help.h"
#include "common/parallel.h"
#include "message/learning.h"
#include "message/processing.h"
#include "pipeline/learn/finish.h"
#include "store/index.h"

namespace neardup::cli {
namespace {

// When none of the first kProbeLines non-blank lines (or of all lines, if fewer) is a page,
// the input is not what dedup reads: stop instead of dead-lettering all of it.
constexpr std::size_t kProbeLines = 16;

// Without --sync, a transaction holds at most this many pages (fewer when pipeline.batch_size
// is smaller): a commit without fsync costs little, and the chunks read ahead of the index keep
// their records in memory until their outputs are written. Over synthetic-dev's pages, chunks
// of 512 records (the default batch) kept about 60 MB in flight and ran 3-5 % slower than
// chunks of 64 (about 8 MB), and faulted in two to three times the pages; 32 left cores waiting.
constexpr std::size_t kUnsyncedBatchPages = 64;

// Lines go to the pool this many at a time as they are read; the input's last chunk goes to the
// index this many at a time as they are fingerprinted.
constexpr std::size_t kSliceLines = 32;
static_assert(kProbeLines <= kSliceLines, "the probe looks at the first slice only");

const std::string kSyncHelp =
    "fsync the index after every batch of pipeline.batch_size pages (the input's last batch: "
    "every " +
    std::to_string(kSliceLines) +
    " pages at most; store.sync: true). Off by default for offline runs, which commit batches "
    "of at most " +
    std::to_string(kUnsyncedBatchPages) +
    " pages without fsync: an interrupted run is simply run again, and each fsync waits for "
    "the disk (0.1 ms to 14 ms measured on one VM, far more on a busy disk; README, \"Offline "
    "runs\"). Without it a crash of the machine may lose the last batches, never corrupt the "
    "index; a crash of the process loses nothing committed. --config's store.sync is not used "
    "here";

struct DedupCounts {
  std::uint64_t pages = 0, unique = 0, duplicate = 0, skipped = 0, bad = 0;
};

struct Line {
  std::string where;  // "line 12", or the WARC file and offset
  std::string text;   // the record's bytes until processed; a page takes them (record.page)
  std::uint64_t over_long = 0;  // a line too long to be held: its length (`text` is empty)
  ProcessedRecord record;

  std::string_view bytes() const { return record.page ? record.page->record : text; }
};

// "244 pages  140 unique  99 duplicate  5 skipped  0 bad": the progress line's and the
// summary's counts.
std::string counts_text(const DedupCounts& counts) {
  return std::to_string(counts.pages) + " pages  " + std::to_string(counts.unique) + " unique  " +
         std::to_string(counts.duplicate) + " duplicate  " + std::to_string(counts.skipped) +
         " skipped  " + std::to_string(counts.bad) + " bad";
}

struct Options {
  std::string store, config_path, in = "-", out = "-", dead_letter;
  std::vector<std::string> warc;
  bool sync = false;
  ProgressMode progress = ProgressMode::kAuto;
};

// Runs dedup (learn_only false) or learn over the options' input; the exit code.
int run(const Options& options, bool learn_only) {
  const std::string name = learn_only ? "neardup learn" : "neardup dedup";
  auto config = load_config_or_defaults(options.config_path);
  if (!config) {
    std::cerr << name << ": " << config.error() << "\n";
    return kExitUsage;
  }
  config->store.path = options.store;
  config->store.sync = options.sync;
  // One process, one store: the whole index, whatever share a daemon's config gives its store
  // (store.shards), so that a sharded deployment's config gives the verdicts to compare with.
  config->store.shards = 1;
  config->store.shard = 0;
  auto input = RecordInput::open(options.in, options.warc, config->input, name);
  if (!input) {
    std::cerr << name << ": " << input.error() << "\n";
    return kExitUsage;
  }
  RecordInput& in = **input;
  const auto shared_config = std::make_shared<const Config>(*config);
  // A run's pages may be few beside what the store holds: its tables grow with what it adds
  // rather than being made full-size at open, and it reads the table runs only where its pages
  // probe them (store/index.h, OpenOptions).
  auto index = Index::open(config->store, {.presize_busy_deltas = false, .read_runs_ahead = false});
  if (!index) {
    std::cerr << name << ": " << index.error().message << "\n";
    return kExitFailure;
  }
  const IndexStats stats = (*index)->stats();
  if (auto conflict =
          lsh_conflict(*config, [&](const std::string& s) { return stats.lsh_of(s); })) {
    std::cerr << name << ": " << *conflict << "\n";
    return kExitUsage;
  }
  if (learn_only && !learn::learns(*config)) {
    std::cerr << name << ": "
              << (options.config_path.empty() ? "the defaults" : options.config_path)
              << " learn nothing: set features.weighting: tfidf or denoise.site_boilerplate: "
                 "true\n";
    return kExitUsage;
  }
  auto out = GatherWriter::open(learn_only ? std::string("/dev/null") : options.out);
  if (!out) {
    std::cerr << name << ": " << out.error() << "\n";
    return kExitUsage;
  }
  std::FILE* dead = nullptr;
  if (!options.dead_letter.empty()) {
    dead = std::fopen(options.dead_letter.c_str(), "wb");
    if (!dead) {
      std::cerr << name << ": " << options.dead_letter << ": cannot open for writing\n";
      return kExitUsage;
    }
  }

  const std::string scheme = scheme_id(*config);
  Progress progress(options.progress, name, in.size(), "pages");
  DedupCounts counts;
  const std::size_t chunk_size = std::max<std::size_t>(
      1, options.sync ? config->pipeline.batch_size
                      : std::min<std::size_t>(config->pipeline.batch_size, kUnsyncedBatchPages));
  int exit_code = kExitOk;
  bool not_pages = false;  // stopped: none of the first lines is a page

  // The input is read here, in order, a chunk (an index batch) of lines at a time; the pure
  // stages run over its lines on a pool of one thread per core, handed over kSliceLines at a
  // time as they are read (the cores start on a chunk before all of it is read), with
  // kChunksAhead chunks in flight while the index applies the one before them and its outputs
  // are written. The pool starts lines in input order, so the chunk waited for has every
  // core, and when its last lines leave a core idle the next chunk's take it. The last chunk
  // goes to the index a slice at a time, as each is fingerprinted (a transaction each), so
  // that only its last slice's apply and output are left when the pipeline is done: no core
  // waits on a serial phase.
  struct Slice {
    std::shared_ptr<FifoPool::Batch> batch;
    std::size_t end;  // the slice is lines [previous slice's end, end)
  };
  struct InFlight {
    std::unique_ptr<std::vector<Line>> lines;  // the slices' jobs point into it
    std::vector<Slice> slices;
    std::string read_error;

    InFlight() = default;
    InFlight(InFlight&&) = default;
    InFlight& operator=(InFlight&&) = default;
    ~InFlight() {  // the jobs write into `lines`
      for (Slice& slice : slices) slice.batch->wait();
    }
  };
  constexpr std::size_t kChunksAhead = 2;
  std::deque<InFlight> ahead;
  FifoPool pool(config->pipeline.threads);
  bool input_done = false;
  auto read_ahead = [&] {
    while (!input_done && ahead.size() < kChunksAhead) {
      InFlight next;
      next.lines = std::make_unique<std::vector<Line>>();
      std::vector<Line>& lines = *next.lines;
      lines.reserve(chunk_size);  // the slices handed over point into it
      std::size_t handed = 0;     // lines[0, handed) are with the pool
      auto hand_over = [&] {
        Line* slice = lines.data() + handed;
        next.slices.push_back(Slice{
            pool.submit(lines.size() - handed,
                        [&, slice](std::size_t i) {
                          Line& line = slice[i];
                          line.record =
                              line.over_long > 0
                                  ? process_unheld_record(line.over_long, shared_config, scheme)
                                  : process_record_moved(std::move(line.text), shared_config,
                                                         scheme);
                        }),
            lines.size()});
        handed = lines.size();
      };
      std::string text, where;
      bool more = true;
      while (lines.size() < chunk_size && (more = in.next(text, where))) {
        const std::uint64_t over_long = in.over_long();
        if (over_long == 0 && text.find_first_not_of(" \t\r") == std::string::npos) continue;
        lines.push_back(
            Line{.where = std::move(where), .text = std::move(text), .over_long = over_long});
        if (lines.size() - handed == kSliceLines) hand_over();
      }
      if (lines.size() > handed) hand_over();
      next.read_error = in.error();
      input_done = !more || !next.read_error.empty();
      ahead.push_back(std::move(next));
    }
  };

  // The first lines read: is any of them a page at all, and has any of those pages a body
  // field? Else the run stops, naming what the input looks like and what to set.
  const std::string input_name = options.in == "-" ? "stdin" : options.in;
  auto stop_as_not_pages = [&](std::size_t count, std::string_view noun, std::string_view predicate,
                               const Line& first, std::string_view why,
                               std::string_view looks_like) {
    std::cerr << name << ": none of the first " << count << " " << noun << " of " << input_name
              << " " << predicate << " (" << first.where << ": " << why
              << "); the input looks like " << looks_like << ". Nothing was written.\n";
    exit_code = kExitUsage;
    not_pages = true;
    return false;
  };
  auto probe_first_lines = [&](std::span<const Line> lines) {
    const auto probed = lines.first(std::min(kProbeLines, lines.size()));
    auto is_page = [](const Line& line) { return line.record.page.has_value(); };
    const auto first_page = std::ranges::find_if(probed, is_page);
    if (first_page == probed.end()) {
      const RecordError& error = lines[0].record.page.error();
      return stop_as_not_pages(
          probed.size(), "lines", "is a page", lines[0], error.code + ": " + error.detail,
          describe_input(in.lines()->head(), lines[0].bytes(), config->input.fields.url));
    }
    // Pages skipped as empty_body one and all, for want of the body field: misnamed.
    const bool all_empty = std::ranges::all_of(probed, [&](const Line& line) {
      return !is_page(line) ||
             (line.record.result.skip && line.record.result.skip->reason == "empty_body");
    });
    if (!all_empty) return true;
    auto missing = describe_missing_body(first_page->bytes(), config->input.fields.body,
                                         config->input.fields.body_base64);
    if (!missing) return true;
    const auto pages = static_cast<std::size_t>(std::ranges::count_if(probed, is_page));
    return stop_as_not_pages(pages, pages == 1 ? "page" : "pages", "has a body", *first_page,
                             "skipped: empty_body", *missing);
  };

  // Fingerprinted lines through the index in one transaction, in order, then out. False when
  // the run stops.
  bool first_lines = true;
  std::vector<IndexItem> items;
  std::vector<const ProcessedRecord*> records;
  Learning learning;
  auto apply_lines = [&](std::span<const Line> lines) {
    if (lines.empty()) return true;
    if (std::exchange(first_lines, false) && in.lines() && !probe_first_lines(lines)) {
      return false;
    }
    items.clear();
    records.clear();
    for (const Line& line : lines) {
      items.push_back(index_item(line.record));
      records.push_back(&line.record);
    }
    if (learn_only) {
      auto learned = learning.learn(**index, records);
      if (!learned) {
        std::cerr << name << ": index: " << learned.error().message << "\n";
        exit_code = kExitFailure;
        return false;
      }
      counts.pages += *learned;
      progress.update(in.position(), counts.pages, [&] { return counts_text(counts); });
      return true;
    }
    auto verdicts = learning.apply(**index, items, records);
    if (!verdicts) {
      std::cerr << name << ": index: " << verdicts.error().message << "\n";
      exit_code = kExitFailure;
      return false;
    }
    std::vector<Outcome> outcomes;  // viewed by the queued output until the flush
    outcomes.reserve(lines.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const Line& line = lines[i];
      const Outcome& outcome = outcomes.emplace_back(render_outcome(line.record, (*verdicts)[i]));
      if (outcome.dead_letter) {
        ++counts.bad;
        progress.clear();
        std::cerr << name << ": " << line.where << ": " << outcome.error.code << ": "
                  << outcome.error.detail << "\n";
        if (dead && line.over_long == 0) {  // a line too long to be held is not written
          const std::string_view bytes = line.bytes();
          std::fwrite(bytes.data(), 1, bytes.size(), dead);
          std::fputc('\n', dead);
        }
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
      (*out)->add(outcome.output.before);
      (*out)->add(outcome.output.inserted);
      (*out)->add(outcome.output.after);
      (*out)->add("\n");
    }
    if (!(*out)->flush()) {
      std::cerr << name << ": " << (*out)->error() << "\n";
      exit_code = kExitFailure;
      return false;
    }
    progress.update(in.position(), counts.pages + counts.bad, [&] { return counts_text(counts); });
    return true;
  };

  while (exit_code == kExitOk) {
    read_ahead();
    if (ahead.empty()) break;
    InFlight chunk = std::move(ahead.front());
    ahead.pop_front();
    const std::vector<Line>& lines = *chunk.lines;
    if (!chunk.read_error.empty()) {  // the lines read before the error still go through
      std::cerr << name << ": " << chunk.read_error << "\n";
      exit_code = kExitFailure;
    }
    if (!input_done || !ahead.empty()) {
      for (Slice& slice : chunk.slices) slice.batch->wait();
      read_ahead();  // the next chunk is fingerprinted while this one is applied
      if (!apply_lines(lines)) break;
      continue;
    }
    std::size_t begin = 0;  // the last chunk: a slice at a time
    for (Slice& slice : chunk.slices) {
      slice.batch->wait();
      if (!apply_lines(std::span(lines).subspan(begin, slice.end - begin))) break;
      begin = slice.end;
    }
    break;
  }
  out->reset();
  if (dead) std::fclose(dead);
  progress.clear();
  if (not_pages) return exit_code;
  std::fputs(in.summary().c_str(), stderr);
  const double seconds = progress.elapsed();
  if (learn_only) {
    std::fprintf(stderr, "summary: learned from %llu pages  %.0f pages/s\n",
                 static_cast<unsigned long long>(counts.pages),
                 seconds > 0 ? static_cast<double>(counts.pages) / seconds : 0.0);
    return exit_code;
  }
  std::fprintf(stderr, "summary: %s  %.0f pages/s\n", counts_text(counts).c_str(),
               seconds > 0 ? static_cast<double>(counts.pages) / seconds : 0.0);
  return exit_code;
}

// The options dedup and learn share: the store, the config, the input, progress.
void add_shared_options(CLI::App* command, Options& options) {
  command->add_option("--store", options.store, "index directory (created if missing)")
      ->required()
      ->option_text("DIR");
  add_config_option(command, options.config_path);
  add_record_input_options(command, options.in, options.warc);
  add_progress_options(command, options.progress);
}

}  // namespace

void register_dedup(CLI::App& root, CommandRegistry& registry) {
  auto options = std::make_shared<Options>();
  CLI::App* sub = root.add_subcommand(
      "dedup",
      "Tag JSONL pages or WARC responses unique/duplicate/skipped through the index, in input "
      "order");
  add_shared_options(sub, *options);
  sub->add_option("--out", options->out, "tagged JSONL; - for stdout")->option_text("FILE");
  sub->add_option("--dead-letter", options->dead_letter, "write unreadable lines here")
      ->option_text("FILE");
  sub->add_flag("--sync", options->sync, kSyncHelp);
  sub->footer(
      "Pages are read in order and written in the same order, one tagged line per page; lines\n"
      "that are not pages are reported on stderr by number (and written to --dead-letter).\n"
      "The run stops (exit 2) if none of the first 16 lines is a page, or none of those pages\n"
      "has a body field, naming what the input looks like and what to set. Exit 0 also when\n"
      "some lines were bad: the summary line counts them.\n"
      "With --warc, each HTTP 200 HTML response record is one page (docs/cli.md, \"WARC input\");\n"
      "the other records are counted on a \"warc:\" line, damaged ones reported with their "
      "offset.");
  set_examples(sub, {"neardup dedup --store /tmp/nd --in samples/crawl.jsonl.gz --out tagged.jsonl",
                     "zcat crawl.jsonl.gz | neardup dedup --store idx --dead-letter bad.jsonl "
                     "| jq -c 'select(.neardup.status == \"duplicate\")'",
                     "neardup dedup --store idx --warc CC-MAIN-*.warc.gz --out tagged.jsonl"});
  registry.add(sub, [options]() { return run(*options, false); });

  auto learn_options = std::make_shared<Options>();
  CLI::App* learn = root.add_subcommand(
      "learn",
      "Teach the index what a crawl's pages say about words and sites (features.weighting "
      "tfidf, denoise.site_boilerplate) without storing them");
  add_shared_options(learn, *learn_options);
  learn->footer(
      "Reads pages as dedup does and, for the config's scheme, learns from every one of them as\n"
      "from a new page: document frequencies (tfidf) and each host's boilerplate\n"
      "(site_boilerplate). Nothing is stored or tagged. Seeds an index before a crawl so that\n"
      "its first pages are weighed by what an earlier crawl taught (docs/configuration.md,\n"
      "\"Learning from the crawl\"). Run it again to learn more; the learned state is shown by\n"
      "`neardup stats` and `neardup boilerplate`.");
  set_examples(learn, {"neardup learn --config tfidf.yaml --store idx --in last-crawl.jsonl.gz",
                       "neardup learn --config sites.yaml --store idx --warc CC-MAIN-*.warc.gz"});
  registry.add(learn, [learn_options]() { return run(*learn_options, true); });
}

}  // namespace neardup::cli
