#include "message/answers.h"

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cstdio>
#include <ctime>

#include "common/sketch.h"
#include "message/learning.h"
#include "message/tag.h"
#include "pipeline/fingerprint/fingerprint.h"
#include "store/table_design.h"

namespace neardup {

std::string format_rfc3339_ms(std::int64_t ms) {
  std::int64_t seconds = ms / 1000, millis = ms % 1000;
  if (millis < 0) {
    millis += 1000;
    seconds -= 1;
  }
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) return std::to_string(ms);
  char text[48];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03" PRId64 "Z",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                millis);
  return text;
}

nlohmann::json stored_page_json(const StoredPage& page) {
  nlohmann::json out{{"id", page.id},
                     {"scheme", page.scheme},
                     {"fingerprint", fingerprint_hex(page.fingerprint)},
                     {"first_seen", format_rfc3339_ms(page.first_seen_ms)},
                     {"stored_at", format_rfc3339_ms(page.stored_at_ms)},
                     {"status", status_name(page.verdict.status)},
                     {"cluster", page.cluster}};
  if (page.verdict.status == Verdict::Status::kDuplicate) {
    out["matched"] = page.verdict.matched;
    out["distance"] = page.verdict.distance;
    out["method"] = method_name(page.verdict.method);
    if (page.verdict.similarity >= 0) out["similarity"] = page.verdict.similarity;
  }
  Tag relations;
  set_relations(relations, page.verdict);
  add_relations_json(out, relations);
  return out;
}

nlohmann::json cluster_json(const Cluster& cluster, std::size_t max_members) {
  nlohmann::json members = nlohmann::json::array();
  for (std::size_t i = 0; i < cluster.members.size() && i < max_members; ++i) {
    const StoredPage& member = cluster.members[i];
    members.push_back(
        {{"id", member.id}, {"first_seen", format_rfc3339_ms(member.first_seen_ms)}});
  }
  nlohmann::json out{{"root", cluster.root}, {"scheme", cluster.scheme}, {"size", cluster.size}};
  if (cluster.size > members.size()) out["truncated"] = true;
  out["members"] = std::move(members);
  return out;
}

StoreResult<std::optional<nlohmann::json>> describe_page(Index& index, const std::string& id,
                                                         std::size_t max_members) {
  auto page = index.find(id);
  if (!page) return std::unexpected(page.error());
  if (!*page) return std::nullopt;
  auto cluster = index.cluster((*page)->cluster_doc, max_members);
  if (!cluster) return std::unexpected(cluster.error());
  return nlohmann::json{{"page", stored_page_json(**page)},
                        {"cluster", cluster_json(*cluster, max_members)}};
}

namespace {

nlohmann::json simhash_explanation(std::uint64_t a, std::uint64_t b, const IndexStats& stats) {
  const TableDesign design = TableDesign::make(stats.design_k, stats.design_r);
  const std::uint64_t differ = a ^ b;
  nlohmann::json blocks = nlohmann::json::array(), tables = nlohmann::json::array();
  std::uint32_t shift = 64;
  for (std::uint32_t width : design.block_width) {
    shift -= width;
    const std::uint64_t mask = width >= 64 ? ~0ull : (1ull << width) - 1;
    blocks.push_back(std::popcount((differ >> shift) & mask));
  }
  for (std::size_t t = 0; t < design.tables(); ++t) {
    const std::uint64_t keys = design.permute(t, a) ^ design.permute(t, b);
    if ((keys >> (64 - design.prefix_bits(t))) == 0) tables.push_back(t);
  }
  return {{"distance", std::popcount(differ)},
          {"k", stats.design_k},
          {"blocks", std::move(blocks)},
          {"tables", std::move(tables)}};
}

std::optional<nlohmann::json> minhash_explanation(const StoredPage& a, const StoredPage& b,
                                                  const IndexStats& stats) {
  if (a.sketch.empty() || a.scheme != b.scheme || a.sketch.size() != b.sketch.size()) {
    return std::nullopt;
  }
  auto scheme = std::ranges::find(stats.schemes, a.scheme, &IndexStats::Scheme::id);
  if (scheme == stats.schemes.end() || scheme->bands == 0) return std::nullopt;
  nlohmann::json bands = nlohmann::json::array();
  for (std::uint32_t band = 0; band < scheme->bands; ++band) {
    // The index keeps the low kSketchBits of each value: a band shared in those bits.
    if (shares_band(a.sketch, b.sketch, band, scheme->rows, kSketchMask)) bands.push_back(band);
  }
  return nlohmann::json{{"similarity", estimate_jaccard(a.sketch, b.sketch)},
                        {"bands", std::move(bands)},
                        {"of", scheme->bands},
                        {"rows", scheme->rows}};
}

StoreError no_live_page(const std::string& id) {
  return StoreError{.code = StoreError::Code::kNotFound,
                    .message = id + ": no live page stored under this id"};
}

}  // namespace

StoreResult<nlohmann::json> explain_stored(Index& index, const std::string& a,
                                           const std::string& b) {
  auto first = index.find(a);
  if (!first) return std::unexpected(first.error());
  if (!*first) return std::unexpected(no_live_page(a));
  const StoredPage& page = **first;
  std::string other = b;
  if (other.empty()) {
    other = page.verdict.status == Verdict::Status::kDuplicate ? page.verdict.matched
                                                                : page.cluster;
  }
  if (other == a) {
    return std::unexpected(StoreError{
        .code = StoreError::Code::kNotFound,
        .message = a + " is the first page of its cluster and matched no page: name the page "
                       "to compare it with (--with)"});
  }
  auto second = index.find(other);
  if (!second) return std::unexpected(second.error());
  if (!*second) return std::unexpected(no_live_page(other));
  const IndexStats stats = index.stats();
  nlohmann::json out{{"a", stored_page_json(page)},
                     {"b", stored_page_json(**second)},
                     {"simhash", simhash_explanation(page.fingerprint, (*second)->fingerprint,
                                                     stats)}};
  if (auto minhash = minhash_explanation(page, **second, stats)) out["minhash"] = *minhash;
  if (page.verdict.status == Verdict::Status::kDuplicate && page.verdict.matched == other) {
    nlohmann::json stored{{"matched", true},
                          {"method", method_name(page.verdict.method)},
                          {"distance", page.verdict.distance}};
    if (page.verdict.similarity >= 0) stored["similarity"] = page.verdict.similarity;
    out["stored"] = std::move(stored);
  } else {
    out["stored"] = {{"matched", false}};
  }
  return out;
}

ProcessedRecord process_html(std::string body, std::string content_type, std::string id,
                             std::shared_ptr<const Config> config, std::string scheme) {
  ProcessedRecord record{.config = std::move(config), .scheme = std::move(scheme)};
  record.result = fingerprint_page(body, content_type, *record.config, {.url = id});
  record.page = Page{.url = id, .id = id, .body = std::move(body),
                     .content_type = std::move(content_type)};
  return record;
}

StoreResult<LookupAnswer> lookup_record(Index& index, const ProcessedRecord& record) {
  LookupAnswer answer;
  if (!record.page) {
    answer.dead_letter = true;
    answer.error = record.page.error();
    return answer;
  }
  IndexItem item = index_item(record);
  Verdict verdict = item.decided;
  if (item.page) {
    auto finished = Learning::finish(index, record, *item.page);
    if (!finished) return std::unexpected(finished.error());
    auto found = index.lookup(*item.page);
    if (!found) return std::unexpected(found.error());
    verdict = std::move(*found);
    if (*finished) {
      verdict.fingerprint = item.page->fingerprint;
      verdict.boilerplate_lines = std::move(**finished);
    }
  }
  answer.tag = make_tag(record.result, verdict, record.scheme);
  return answer;
}

nlohmann::json lookup_json(const ProcessedRecord& record, const LookupAnswer& answer) {
  if (answer.dead_letter) return {{"error", answer.error.code}, {"detail", answer.error.detail}};
  return {{"id", record.page->id}, {"url", record.page->url}, {"neardup", tag_to_json(answer.tag)}};
}

}  // namespace neardup
