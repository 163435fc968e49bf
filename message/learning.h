// What the schemes that learn from the crawl (features.weighting tfidf, denoise.site_boilerplate;
// pipeline/learn/finish.h) learned, kept beside the index for its one writer.
//
//   Learning learning;
//   auto verdicts = learning.apply(*index, items, records);  // instead of index->apply(items)
//
// A scheme's state (its document frequencies and its hosts' boilerplate) is read from the
// index's `learned` table on its first page and kept in memory; apply() hands it to
// Index::apply as the BatchLearner, which finishes each page it decides afresh and learns from
// it in order, and writes what changed in the batch's transaction (store/FORMAT.md, "learned").
// A batch that fails leaves the stored state as it was, and the schemes it touched are read
// again, so that a retry (or the next process, after a crash) learns exactly what an
// uninterrupted run would have: a page's signatures depend on the pages applied before it,
// never on whether it was applied twice.
// Writer thread only.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "message/processing.h"
#include "pipeline/learn/doc_freq.h"
#include "pipeline/learn/site_blocks.h"
#include "store/index.h"

namespace neardup {

class Learning {
 public:
  // What one scheme learned.
  struct State {
    explicit State(const Config& config)
        : sites({.min_pages = config.denoise.site_min_pages,
                 .max_hosts = config.denoise.site_max_hosts}) {}
    learn::DocFrequencies frequencies;
    learn::SiteBoilerplate sites;
  };

  // index.apply(items) where items[i] was made from *records[i] (index_item()); the pages of
  // schemes that learn are finished and learned from. Errors: those of apply() and of reading
  // the learned state (kCorrupt for a record that is not what its key says).
  StoreResult<std::vector<Verdict>> apply(Index& index, std::span<const IndexItem> items,
                                          std::span<const ProcessedRecord* const> records);

  // Learns from every page of `records` (of schemes that learn) as from a new page, without
  // storing any (neardup learn), and writes what changed in one transaction. Returns how many
  // pages taught something. Errors: as apply().
  StoreResult<std::size_t> learn(Index& index, std::span<const ProcessedRecord* const> records);

  // The signatures of a page that is only looked up (Index::lookup, no insert) under what its
  // scheme learned so far, read from the index for this page alone (the frequencies and its
  // host): `page` is finished in place. Returns the main-text lines dropped as its site's
  // boilerplate, or nullopt when the page's scheme does not learn. Errors: as read().
  static StoreResult<std::optional<std::vector<std::uint32_t>>> finish(
      Index& index, const ProcessedRecord& record, PageRequest& page);

  // A scheme's state as stored in the index (a fresh one when nothing was learned), without
  // keeping it. Errors: as apply().
  static StoreResult<std::unique_ptr<State>> read(Index& index, const std::string& scheme,
                                                  const Config& config);
  // The same, with the one host (or none, when empty) of the sites' state, and the frequencies
  // only when the config weighs by them.
  static StoreResult<std::unique_ptr<State>> read(Index& index, const std::string& scheme,
                                                  const Config& config, std::string_view host);

  // Bytes held in memory by every loaded scheme's state.
  std::size_t memory_bytes() const;

  // The keys of the learned table (store/FORMAT.md).
  static std::string frequencies_key(const std::string& scheme, std::size_t chunk);
  static std::string pages_key(const std::string& scheme);
  static std::string host_key(const std::string& scheme, std::string_view host);

 private:
  // A scheme's state from its records of the learned table.
  static StoreResult<std::unique_ptr<State>> decode(
      const std::string& scheme, const Config& config,
      const std::vector<std::pair<std::string, std::string>>& records);

  // Reads the state of every scheme of `records` that learns and is not loaded yet; whether
  // any record learns.
  StoreResult<bool> load(Index& index, std::span<const ProcessedRecord* const> records);

  std::map<std::string, std::unique_ptr<State>, std::less<>> schemes_;
};

}  // namespace neardup
