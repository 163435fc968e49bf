#include "message/learning.h"

#include <algorithm>
#include <optional>
#include <set>

#include "common/coding.h"
#include "message/tag.h"
#include "pipeline/learn/finish.h"
#include "store/records.h"

namespace neardup {
namespace {

// The finished signatures into the page's request.
void set_signatures(const learn::Finished& finished, PageRequest& page) {
  page.fingerprint = finished.fingerprint;
  if (!finished.text_changed) return;  // the worker's sketch and passages stand
  if (!page.sketch.empty()) {
    page.sketch = finished.sketch;
    page.sketch_upper = finished.sketch_upper;
  }
  page.anchors = finished.passages.anchors;
  page.paragraphs = paragraph_hashes(finished.passages);
}

// The record's page finished under its scheme's state (each part of it only when the config
// learns it).
learn::Finished finish_under(const ProcessedRecord& record, const Learning::State& state) {
  const Config& config = *record.config;
  return learn::finish(
      *record.result.learn, config,
      config.features.weighting == Weighting::kTfidf ? &state.frequencies : nullptr,
      config.denoise.site_boilerplate ? &state.sites : nullptr);
}

// The BatchLearner of one batch: finishes each page of a learning scheme with its scheme's
// state, learns from it after its verdict, and says what changed. With `learn_all` (neardup
// learn: no items), changes() itself learns from every page first, as from a new one, so that
// a transaction run again after undo() learns it again.
class Batch final : public BatchLearner {
 public:
  Batch(std::span<const ProcessedRecord* const> records,
        const std::map<std::string, std::unique_ptr<Learning::State>, std::less<>>& schemes,
        bool learn_all = false)
      : records_(records), schemes_(schemes), finished_(records.size()), learn_all_(learn_all) {
    for (const ProcessedRecord* record : records_) {
      if (record->result.learn) marked_.insert(record->scheme);
    }
    for (const std::string& scheme : marked_) {
      schemes_.at(scheme)->frequencies.mark();
      schemes_.at(scheme)->sites.mark();
    }
  }

  void undo() override {
    for (const std::string& scheme : marked_) {
      schemes_.at(scheme)->frequencies.undo();
      schemes_.at(scheme)->sites.undo();
    }
    std::fill(finished_.begin(), finished_.end(), std::nullopt);
  }

  bool finish(std::size_t item, PageRequest& page) override {
    const ProcessedRecord& record = *records_[item];
    if (!record.result.learn) return false;
    learn::Finished finished = finish_under(record, *schemes_.at(record.scheme));
    set_signatures(finished, page);
    finished_[item] = std::move(finished);
    return true;
  }

  void learned(std::size_t item, Verdict& verdict) override {
    if (!finished_[item]) return;
    const ProcessedRecord& record = *records_[item];
    const learn::LearnInput& input = *record.result.learn;
    const learn::Finished& finished = *finished_[item];
    verdict.fingerprint = finished.fingerprint;
    verdict.boilerplate_lines = finished.removed_lines;
    if (verdict.replayed || verdict.status != Verdict::Status::kUnique) return;
    Learning::State& state = *schemes_.at(record.scheme);
    touched_.insert(record.scheme);
    if (record.config->features.weighting == Weighting::kTfidf) {
      state.frequencies.add_page(finished.features);
    }
    if (record.config->denoise.site_boilerplate && !input.host.empty()) {
      state.sites.add_page(input.host, finished.blocks, [&](std::size_t i) {
        return learn::paragraph_text(input, finished.block_paragraphs[i]);
      });
    }
  }

  std::vector<std::pair<std::string, std::optional<std::string>>> changes() override {
    if (learn_all_) {
      for (std::size_t i = 0; i < records_.size(); ++i) {
        PageRequest page;
        if (!finish(i, page)) continue;
        Verdict verdict;  // as if new
        learned(i, verdict);
      }
    }
    std::vector<std::pair<std::string, std::optional<std::string>>> out;
    for (const std::string& scheme : touched_) {
      Learning::State& state = *schemes_.at(scheme);
      for (std::size_t chunk : state.frequencies.take_changed_chunks()) {
        out.emplace_back(Learning::frequencies_key(scheme, chunk),
                         state.frequencies.encode_chunk(chunk));
      }
      out.emplace_back(Learning::pages_key(scheme), records::encode_u64(state.frequencies.pages()));
      for (const std::string& host : state.sites.take_changed()) {
        const learn::SiteBoilerplate::Host* kept = state.sites.find(host);
        out.emplace_back(
            Learning::host_key(scheme, host),
            kept ? std::optional(learn::SiteBoilerplate::encode(*kept)) : std::nullopt);
      }
    }
    return out;
  }

  const std::set<std::string>& touched() const { return touched_; }

 private:
  std::span<const ProcessedRecord* const> records_;
  const std::map<std::string, std::unique_ptr<Learning::State>, std::less<>>& schemes_;
  std::vector<std::optional<learn::Finished>> finished_;
  const bool learn_all_;
  std::set<std::string> marked_, touched_;
};

StoreResult<> corrupt_learned(const std::string& key) {
  return store_error(StoreError::Code::kCorrupt, "learned record " + key + " is damaged");
}

}  // namespace

std::string Learning::frequencies_key(const std::string& scheme, std::size_t chunk) {
  return scheme + "/d/" + coding::be64_key(chunk);
}
std::string Learning::pages_key(const std::string& scheme) { return scheme + "/n"; }
std::string Learning::host_key(const std::string& scheme, std::string_view host) {
  return scheme + "/h/" + std::string(host);
}

StoreResult<std::unique_ptr<Learning::State>> Learning::read(Index& index,
                                                             const std::string& scheme,
                                                             const Config& config) {
  auto records = index.learned(scheme + "/");
  if (!records) return std::unexpected(records.error());
  return decode(scheme, config, *records);
}

StoreResult<std::unique_ptr<Learning::State>> Learning::read(Index& index,
                                                             const std::string& scheme,
                                                             const Config& config,
                                                             std::string_view host) {
  // The frequencies only for a scheme that weighs by them (a lookup reads no more than it uses).
  StoreResult<std::vector<std::pair<std::string, std::string>>> records =
      config.features.weighting == Weighting::kTfidf
          ? index.learned(scheme + "/d/")
          : std::vector<std::pair<std::string, std::string>>{};
  if (!records) return std::unexpected(records.error());
  for (const std::string& key : {pages_key(scheme), host_key(scheme, host)}) {
    if (key == host_key(scheme, "")) continue;
    auto found = index.learned(key);
    if (!found) return std::unexpected(found.error());
    for (auto& record : *found) {
      if (record.first == key) records->push_back(std::move(record));  // not a longer host
    }
  }
  return decode(scheme, config, *records);
}

StoreResult<std::optional<std::vector<std::uint32_t>>> Learning::finish(
    Index& index, const ProcessedRecord& record, PageRequest& page) {
  if (!record.result.learn) return std::nullopt;
  auto state = read(index, record.scheme, *record.config, record.result.learn->host);
  if (!state) return std::unexpected(state.error());
  learn::Finished finished = finish_under(record, **state);
  set_signatures(finished, page);
  return std::move(finished.removed_lines);
}

StoreResult<std::unique_ptr<Learning::State>> Learning::decode(
    const std::string& scheme, const Config& config,
    const std::vector<std::pair<std::string, std::string>>& records) {
  auto state = std::make_unique<State>(config);
  const std::string chunks = scheme + "/d/", hosts = scheme + "/h/", pages = pages_key(scheme);
  for (const auto& [key, value] : records) {
    bool ok = false;
    if (key == pages) {
      auto n = records::decode_u64(value);
      ok = n.has_value();
      if (ok) state->frequencies.set_pages(*n);
    } else if (key.starts_with(chunks) && key.size() == chunks.size() + 8) {
      ok = state->frequencies.decode_chunk(coding::decode_be64(key.data() + chunks.size()), value);
    } else if (key.starts_with(hosts)) {
      ok = state->sites.decode(std::string_view(key).substr(hosts.size()), value);
    }
    if (!ok) {
      auto error = corrupt_learned(key);
      return std::unexpected(error.error());
    }
  }
  state->frequencies.take_changed_chunks();
  state->sites.take_changed();
  return state;
}

StoreResult<bool> Learning::load(Index& index, std::span<const ProcessedRecord* const> records) {
  bool learns = false;
  for (const ProcessedRecord* record : records) {
    if (!record->result.learn) continue;
    learns = true;
    if (schemes_.contains(record->scheme)) continue;
    auto state = read(index, record->scheme, *record->config);
    if (!state) return std::unexpected(state.error());
    schemes_.emplace(record->scheme, std::move(*state));
  }
  return learns;
}

StoreResult<std::vector<Verdict>> Learning::apply(Index& index, std::span<const IndexItem> items,
                                                  std::span<const ProcessedRecord* const> records) {
  auto learns = load(index, records);
  if (!learns) return std::unexpected(learns.error());
  if (!*learns) return index.apply(items);
  Batch batch(records, schemes_);
  auto verdicts = index.apply(items, &batch);
  if (!verdicts) {
    // Nothing of the batch was stored: what it taught is read again.
    for (const std::string& scheme : batch.touched()) schemes_.erase(scheme);
  }
  return verdicts;
}

StoreResult<std::size_t> Learning::learn(Index& index,
                                         std::span<const ProcessedRecord* const> records) {
  if (auto loaded = load(index, records); !loaded) return std::unexpected(loaded.error());
  Batch batch(records, schemes_, /*learn_all=*/true);
  if (auto written = index.apply({}, &batch); !written) {
    for (const std::string& scheme : batch.touched()) schemes_.erase(scheme);
    return std::unexpected(written.error());
  }
  return static_cast<std::size_t>(std::ranges::count_if(
      records, [](const ProcessedRecord* record) { return record->result.learn != nullptr; }));
}

std::size_t Learning::memory_bytes() const {
  std::size_t bytes = 0;
  for (const auto& [scheme, state] : schemes_) {
    bytes += state->frequencies.memory_bytes() + state->sites.memory_bytes();
  }
  return bytes;
}

}  // namespace neardup
