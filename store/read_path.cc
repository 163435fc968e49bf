#include "store/read_path.h"

#include <algorithm>
#include <bit>

#include "common/coding.h"
#include "store/distinct.h"
#include "store/docs_table.h"
#include "store/passages.h"

namespace neardup {
namespace {

using Code = StoreError::Code;
using records::DocRecord;

// A live stored document that a signature matched.
struct Hit {
  std::uint64_t doc = 0;
  DocRecord record;
  int distance = 0;       // SimHash hits
  double similarity = 0;  // MinHash hits
};

// The nearest live document within k bits of the page's fingerprint among the SimHash hits
// (ties: the lowest document number). A hit's distance is over the bits its table keeps
// (Catalog::table_key): a lower bound of the document's, which its stored fingerprint gives.
StoreResult<std::optional<Hit>> nearest(const Documents& docs, const PageRequest& page,
                                        std::vector<std::pair<int, std::uint64_t>>& hits) {
  if (hits.empty()) return std::nullopt;
  const auto k = static_cast<int>(page.max_distance);
  // Hits in order of (bound, doc): once the best found so far is no worse than the next
  // hit's bound, no later hit can beat it. A page with many copies in the index has a hit
  // per copy and table, and reads the first copy's document alone.
  std::sort(hits.begin(), hits.end());
  std::optional<Hit> best;
  for (std::size_t i = 0; i < hits.size(); ++i) {
    const auto [bound, doc] = hits[i];
    if (best && std::pair(best->distance, best->doc) <= std::pair(bound, doc)) break;
    if (i > 0 && hits[i - 1].second == doc && hits[i - 1].first == bound) continue;
    auto record = docs.get(doc);
    if (!record) return std::unexpected(record.error());
    const int distance = std::popcount(record->fingerprint ^ page.fingerprint);
    if (distance > k || !docs.live(*record)) continue;
    if (!best || std::pair(distance, doc) < std::pair(best->distance, best->doc)) {
      best = Hit{.doc = doc, .record = std::move(*record), .distance = distance};
    }
  }
  return best;
}

// The most similar live document among the band candidates that really shares a band with the
// page and reaches its min_similarity (ties: the lowest document number); with `first_match`,
// the live matching document of the lowest number.
StoreResult<std::optional<Hit>> most_similar(const Documents& docs,
                                             const records::SchemeState& scheme,
                                             const PageRequest& page,
                                             const std::vector<std::uint64_t>& candidates,
                                             bool first_match) {
  struct Match {
    double similarity;
    std::uint64_t doc;
    std::optional<DocRecord> record;  // when read with the sketch
  };
  // The document's record: the one its sketch came with, else read.
  auto record_of = [&](std::uint64_t doc, std::optional<DocRecord>& read) {
    return read ? StoreResult<DocRecord>(std::move(*read)) : docs.get(doc);
  };
  std::vector<Match> matches;
  for (std::uint64_t doc : candidates) {  // ascending
    std::optional<DocRecord> read;
    auto sketch = docs.sketch(doc, page.sketch.size(), &read);
    if (!sketch) return std::unexpected(sketch.error());
    if (!minhash_match(page.sketch, *sketch, scheme.bands, scheme.rows, page.min_similarity,
                       kSketchMask)) {
      continue;
    }
    const double similarity = estimate_jaccard(page.sketch, *sketch);
    if (similarity == 1.0 || first_match) {
      // Nothing is more similar (or any live match will do), and every later document has a
      // higher number: the first live one is the answer, without reading the other copies'
      // sketches.
      auto record = record_of(doc, read);
      if (!record) return std::unexpected(record.error());
      if (docs.live(*record)) {
        return Hit{.doc = doc, .record = std::move(*record), .similarity = similarity};
      }
      continue;  // not live: never the answer
    }
    matches.push_back({similarity, doc, std::move(read)});
  }
  // The most similar first, ties to the lowest number.
  std::sort(matches.begin(), matches.end(), [](const Match& a, const Match& b) {
    return a.similarity != b.similarity ? a.similarity > b.similarity : a.doc < b.doc;
  });
  for (Match& m : matches) {
    auto record = record_of(m.doc, m.record);
    if (!record) return std::unexpected(record.error());
    if (docs.live(*record)) {
      return Hit{.doc = m.doc, .record = std::move(*record), .similarity = m.similarity};
    }
  }
  return std::nullopt;
}

}  // namespace

StoreResult<DocRecord> read_doc(const lmdb::Txn& txn, const StoreTables& tables,
                                std::uint64_t doc) {
  auto record = DocsTable(tables).find(txn, doc);
  if (!record) return std::unexpected(record.error());
  if (!*record) {
    return std::unexpected(StoreError{StoreError::Code::kLmdb, MDB_NOTFOUND,
                                      "docs record " + std::to_string(doc) + " not found"});
  }
  return std::move(**record);
}

namespace {

// A document's sketch as stored (empty when it has none), and whether it holds every bit: in
// its compact docs record (`known` when the caller has it, else read into `*read`), or for a
// document numbered before docs_compact_from in `sketches`.
StoreResult<std::pair<Sketch, bool>> stored_sketch(const lmdb::Txn& txn, const StoreTables& tables,
                                                   std::uint64_t doc, std::size_t hashes,
                                                   const DocRecord* known,
                                                   std::optional<DocRecord>* read) {
  std::string_view bytes;
  if (doc >= tables.docs_compact_from) {
    if (known == nullptr) {
      auto record = read_doc(txn, tables, doc);
      if (!record) return std::unexpected(record.error());
      known = &read->emplace(std::move(*record));
    }
    bytes = known->sketch;
  } else {
    auto value = tables.sketches.get(txn, coding::be64_key(doc));
    if (!value && value.error().code != MDB_NOTFOUND) {
      return std::unexpected(from_lmdb(value.error()));
    }
    if (value) bytes = *value;
  }
  if (bytes.empty()) return std::pair{Sketch{}, true};
  auto sketch = records::decode_sketch(bytes, hashes);
  if (!sketch) return corrupt("sketch of document " + std::to_string(doc));
  return std::pair{std::move(*sketch), records::whole_sketch(bytes, hashes)};
}

}  // namespace

StoreResult<Sketch> read_sketch(const lmdb::Txn& txn, const StoreTables& tables,
                                std::uint64_t doc, std::size_t hashes,
                                std::optional<DocRecord>* record) {
  std::optional<DocRecord> read;
  auto stored = stored_sketch(txn, tables, doc, hashes, nullptr, record ? record : &read);
  if (!stored) return std::unexpected(stored.error());
  return std::move(stored->first);
}

StoreResult<Sketch> read_whole_sketch(const lmdb::Txn& txn, const StoreTables& tables,
                                      std::uint64_t doc, const DocRecord& record,
                                      std::size_t hashes, SketchUpper* upper) {
  if (upper != nullptr) upper->clear();
  const std::uint32_t scheme = record.scheme;
  auto stored = stored_sketch(txn, tables, doc, hashes, &record, nullptr);
  if (!stored) return std::unexpected(stored.error());
  auto& [sketch, whole_bits] = *stored;
  if (whole_bits) return std::move(sketch);
  const std::string what = "the high bits of document " + std::to_string(doc) + "'s sketch";
  if (!tables.has_sketch_highs) return corrupt(what + " (no sketch_highs database)");
  auto high = tables.sketch_highs.get(txn, records::sketch_high_key(scheme, doc));
  if (!high) {
    if (high.error().code == MDB_NOTFOUND) return corrupt(what + " (missing)");
    return std::unexpected(from_lmdb(high.error()));
  }
  auto whole = records::join_sketch(sketch, *high, upper);
  if (!whole) return corrupt(what);
  return std::move(*whole);
}

StoreResult<Verdict> Documents::stored_verdict(const DocRecord& record) const {
  Verdict verdict;
  verdict.replayed = true;
  verdict.status = static_cast<Verdict::Status>(record.status);
  if (verdict.status == Verdict::Status::kDuplicate) {
    auto matched = get(record.matched);
    if (!matched) return std::unexpected(matched.error());
    auto cluster = get(record.cluster);
    if (!cluster) return std::unexpected(cluster.error());
    verdict.matched = std::move(matched->id);
    verdict.duplicate_of = std::move(cluster->id);
    verdict.distance = record.distance;
    verdict.method = record.method;
    verdict.similarity = records::similarity_value(record.similarity);
  }
  return verdict;
}

StoreResult<std::optional<std::pair<std::uint64_t, DocRecord>>> Documents::find_id(
    const std::vector<std::uint64_t>& docs, const std::string& id) const {
  for (std::uint64_t doc : docs) {
    auto record = get(doc);
    if (!record) return std::unexpected(record.error());
    if (!(record->flags & (DocRecord::kSuperseded | DocRecord::kForgotten)) && record->id == id) {
      return std::pair{doc, std::move(*record)};
    }
  }
  return std::nullopt;
}

StoreResult<StoredPage> Documents::stored_page(std::uint64_t doc, const DocRecord& record) const {
  StoredPage page{.doc = doc,
                  .id = record.id,
                  .scheme = scheme(record.scheme).id,
                  .fingerprint = record.fingerprint,
                  .first_seen_ms = record.first_seen_ms,
                  .stored_at_ms = std::int64_t{record.stored_at_s} * 1000,
                  .cluster_doc = record.cluster};
  auto stored_sketch = sketch(doc, scheme(record.scheme).hashes);
  if (!stored_sketch) return std::unexpected(stored_sketch.error());
  page.sketch = std::move(*stored_sketch);
  for (std::uint16_t& v : page.sketch) v &= kSketchMask;  // the same whatever the store's version
  auto verdict = stored_verdict(record);
  if (!verdict) return std::unexpected(verdict.error());
  if (auto related = stored_relations(*this, doc, *verdict); !related) {
    return std::unexpected(related.error());
  }
  page.verdict = std::move(*verdict);
  page.verdict.replayed = false;
  if (record.cluster == doc) {
    page.cluster = record.id;
  } else {
    auto root = get(record.cluster);
    if (!root) return std::unexpected(root.error());
    page.cluster = std::move(root->id);
  }
  return page;
}

StoreResult<Cluster> Documents::cluster(std::uint64_t root_doc,
                                        const std::vector<std::uint64_t>& docs,
                                        std::size_t max_members) const {
  auto found_root = DocsTable(tables_).find(txn_, root_doc);
  if (!found_root) return std::unexpected(found_root.error());
  if (!*found_root) {
    return store_error(Code::kInvalidArgument, "no document " + std::to_string(root_doc));
  }
  const std::optional<DocRecord>& root_record = *found_root;
  Cluster cluster{
      .root = root_record->id, .root_doc = root_doc, .scheme = scheme(root_record->scheme).id};
  for (std::uint64_t doc : docs) {
    auto record = get(doc);
    if (!record) return std::unexpected(record.error());
    if (!live(*record) || record->cluster != root_doc) continue;
    ++cluster.size;
    if (cluster.members.size() >= max_members) continue;
    auto page = stored_page(doc, *record);
    if (!page) return std::unexpected(page.error());
    cluster.members.push_back(std::move(*page));
  }
  return cluster;
}

void Prober::probe(Catalog& catalog, Scheme& scheme, const PageRequest& page,
                   const std::vector<std::uint64_t>& band_keys, const std::uint64_t* id_hash,
                   Candidates& out) {
  out.id_docs.clear();
  out.hits.clear();
  out.band_docs.clear();
  out.checked = 0;
  out.capped_bands = 0;
  probes_.clear();
  queries_.clear();
  // Kinds of probe in probes_, in order: ids, then tables, then bands.
  if (id_hash != nullptr) {
    catalog.ids->start(
        *id_hash, probes_, [&](const Entry& e) { out.id_docs.push_back(e.doc); },
        catalog.id_filter.may_contain(*id_hash));
  }
  const std::size_t id_probes = probes_.size();
  const auto k = static_cast<int>(page.max_distance);
  for (std::size_t t = 0; t < scheme.tables.size(); ++t) {
    if (!catalog.owns(t)) continue;
    const std::uint64_t key = catalog.table_key(t, page.fingerprint);
    scheme.tables[t]->start(key, probes_, [&](const Entry& e) {
      ++out.checked;
      const int distance = std::popcount(e.key ^ key);
      if (distance <= k) out.hits.emplace_back(distance, e.doc);
    });
    queries_.resize(probes_.size() - id_probes, key);
  }
  const std::size_t table_probes = probes_.size();
  if (scheme.bands) {
    for (std::uint64_t key : band_keys) {
      std::size_t taken = 0;  // from the delta and a running merge's frozen entries
      scheme.bands->start(key, probes_, [&](const Entry& e) {
        if (taken == kBandCandidates) {
          ++out.capped_bands;
          return false;
        }
        ++taken;
        out.band_docs.push_back(e.doc);
        return true;
      });
    }
  }
  for (std::size_t i = 0; i < probes_.size(); ++i) {
    if (i < id_probes) {
      probes_[i].finish([&](std::uint64_t, auto doc) { out.id_docs.push_back(doc()); });
    } else if (i < table_probes) {
      // A bucket's entries (thousands a page with few tables): most are passed over on their
      // low bits alone (RunProbe::finish_near).
      const std::uint64_t key = queries_[i - id_probes];
      out.checked += probes_[i].finish_near(key, k, [&](std::uint64_t entry_key, auto doc) {
        const int distance = std::popcount(entry_key ^ key);
        if (distance <= k) out.hits.emplace_back(distance, doc());
      });
    } else {
      // Narrow runs answer for the band key's top 40 bits: decide() confirms each document
      // against its stored sketch.
      std::size_t taken = 0;
      probes_[i].finish([&](std::uint64_t, auto doc) {
        if (taken == kBandCandidates) {
          ++out.capped_bands;
          return false;
        }
        ++taken;
        out.band_docs.push_back(doc());
        return true;
      });
    }
  }
  probes_.clear();
  sort_distinct(out.band_docs, distinct_scratch_);
  out.checked += out.band_docs.size();
}

void Prober::holders(Catalog& catalog, Column& passages, const PageRequest& page,
                     std::vector<std::pair<std::uint32_t, std::uint64_t>>& out) {
  catalog.mutex.assert_held();  // the columns' deltas are the writer's
  out.clear();
  probes_.clear();
  probe_keys_.clear();
  const std::size_t anchors = page.anchors.size();
  const std::size_t keys = anchors + page.paragraphs.size();
  for (std::uint32_t i = 0; i < keys; ++i) {
    const std::uint64_t key = i < anchors ? page.anchors[i] : page.paragraphs[i - anchors];
    passages.start(key, probes_, [&](const Entry& e) { out.emplace_back(i, e.doc); });
    probe_keys_.resize(probes_.size(), i);
  }
  for (std::size_t p = 0; p < probes_.size(); ++p) {
    const std::uint32_t i = probe_keys_[p];
    probes_[p].finish([&](std::uint64_t, auto doc) { out.emplace_back(i, doc()); });
  }
  probes_.clear();
}

void Prober::ids(Catalog& catalog, const std::string& id, std::vector<std::uint64_t>& out) {
  const std::uint64_t key = catalog.id_key(id);
  out.clear();
  probes_.clear();
  catalog.ids->start(
      key, probes_, [&](const Entry& e) { out.push_back(e.doc); },
      catalog.id_filter.may_contain(key));
  for (RunProbe& p : probes_) p.finish([&](std::uint64_t, auto doc) { out.push_back(doc()); });
  probes_.clear();
}

void Prober::members(Catalog& catalog, std::uint64_t root_doc, std::vector<std::uint64_t>& out) {
  out.clear();
  probes_.clear();
  catalog.members->start(root_doc, probes_, [&](const Entry& e) { out.push_back(e.doc); });
  for (RunProbe& p : probes_) p.finish([&](std::uint64_t, auto doc) { out.push_back(doc()); });
  probes_.clear();
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

StoreResult<Verdict> decide(const Documents& docs, const records::SchemeState& scheme,
                            bool has_bands, const PageRequest& page, Candidates& found) {
  Verdict verdict;
  verdict.candidates = static_cast<std::uint32_t>(found.checked);
  verdict.capped_bands = found.capped_bands;
  auto by_simhash = nearest(docs, page, found.hits);
  if (!by_simhash) return std::unexpected(by_simhash.error());
  std::optional<Hit> by_minhash;
  if (has_bands && !page.sketch.empty()) {
    // With a SimHash hit, the MinHash search decides only whether the verdict says both
    // methods (the similarity reported is the hit's either way): the first live match is
    // enough, and a page with many near copies reads one sketch, not every copy's.
    auto best = most_similar(docs, scheme, page, found.band_docs,
                             /*first_match=*/by_simhash->has_value());
    if (!best) return std::unexpected(best.error());
    by_minhash = std::move(*best);
  }
  if (!*by_simhash && !by_minhash) return verdict;
  const Hit& hit = *by_simhash ? **by_simhash : *by_minhash;
  verdict.status = Verdict::Status::kDuplicate;
  verdict.method = (*by_simhash ? Verdict::kSimHash : 0) | (by_minhash ? Verdict::kMinHash : 0);
  verdict.matched = hit.record.id;
  verdict.distance = std::popcount(hit.record.fingerprint ^ page.fingerprint);
  if (by_minhash && by_minhash->doc == hit.doc) {
    verdict.similarity = by_minhash->similarity;
  } else if (!page.sketch.empty()) {
    auto sketch = docs.sketch(hit.doc, page.sketch.size());
    if (!sketch) return std::unexpected(sketch.error());
    if (!sketch->empty()) verdict.similarity = estimate_jaccard(page.sketch, *sketch);
  }
  // Stored and replayed verdicts carry the similarity as stored: rounded alike here.
  verdict.similarity = records::similarity_value(records::quantize_similarity(verdict.similarity));
  auto cluster = docs.get(hit.record.cluster);
  if (!cluster) return std::unexpected(cluster.error());
  verdict.duplicate_of = std::move(cluster->id);
  found.matched_doc = hit.doc;
  found.matched_cluster = hit.record.cluster;
  return verdict;
}

}  // namespace neardup
