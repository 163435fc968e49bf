#include "store/passages.h"

#include <algorithm>
#include <map>

#include "common/coding.h"

namespace neardup {
namespace {

using records::DocRecord;

// A live holder and what it holds of the page.
struct Holder {
  DocRecord record;
  std::uint32_t anchors_held = 0;  // of the page's anchors
  bool outside = false;            // outside the page's own cluster
};

}  // namespace

StoreResult<Related> relate(const Documents& docs, const PageRequest& page, Holders& holders,
                            std::uint64_t own_cluster, Verdict& verdict, std::uint64_t before) {
  Related out;
  const std::size_t anchors = page.anchors.size();
  const std::size_t keys = anchors + page.paragraphs.size();
  // Each key's earliest holder (a narrow column matches a key's top 40 bits: a later holder
  // is a collision, and the first document is the one to name anyway).
  std::sort(holders.begin(), holders.end());
  std::vector<std::uint64_t> holder_of(keys, 0);
  for (const auto& [key, doc] : holders) {
    if (key < keys && holder_of[key] == 0 && doc < before) holder_of[key] = doc;
  }
  std::map<std::uint64_t, Holder> live;  // by document number: ascending, so ties go earliest
  for (std::uint64_t doc : holder_of) {
    if (doc == 0 || live.contains(doc)) continue;
    auto record = docs.get(doc);
    if (!record) return std::unexpected(record.error());
    if (!docs.live(*record)) continue;
    const bool outside = own_cluster == 0 || record->cluster != own_cluster;
    live.emplace(doc, Holder{.record = std::move(*record), .outside = outside});
  }
  for (std::size_t i = 0; i < keys; ++i) {
    if (holder_of[i] == 0) {
      out.fresh.push_back(i < anchors ? page.anchors[i] : page.paragraphs[i - anchors]);
      continue;
    }
    auto it = live.find(holder_of[i]);
    if (it == live.end()) continue;
    if (i < anchors) {
      ++it->second.anchors_held;
    } else {
      ++verdict.paragraphs_seen;
      if (i - anchors <= 0xffff) {
        verdict.paragraphs_seen_at.push_back(static_cast<std::uint16_t>(i - anchors));
      }
      auto& from = out.relations.paragraphs_from;
      if (std::find(from.begin(), from.end(), it->first) == from.end() &&
          from.size() < Verdict::kParagraphPages) {
        from.push_back(it->first);
        verdict.paragraphs_from.push_back(it->second.record.id);
      }
    }
  }
  std::sort(out.fresh.begin(), out.fresh.end());
  out.fresh.erase(std::unique(out.fresh.begin(), out.fresh.end()), out.fresh.end());
  verdict.paragraphs = static_cast<std::uint32_t>(page.paragraphs.size());

  const Holder* in = nullptr;     // contained_in
  const Holder* holds = nullptr;  // contains
  std::uint64_t in_doc = 0, holds_doc = 0;
  double in_share = 0, holds_share = 0;
  for (const auto& [doc, h] : live) {
    if (!h.outside || h.anchors_held == 0) continue;
    const double share = static_cast<double>(h.anchors_held) / static_cast<double>(anchors);
    if (share >= page.min_containment && share > in_share) {
      in = &h, in_doc = doc, in_share = share;
    }
    if (h.record.anchors == 0) continue;
    const double held = std::min(1.0, static_cast<double>(h.anchors_held) / h.record.anchors);
    if (held >= page.min_containment && held > holds_share) {
      holds = &h, holds_doc = doc, holds_share = held;
    }
  }
  // Shares as stored (x 10000), so that a replay says the same.
  if (in != nullptr) {
    out.relations.contained_in = in_doc;
    out.relations.contained_share = records::quantize_similarity(in_share);
    verdict.contained_in = {in->record.id, records::similarity_value(out.relations.contained_share)};
  }
  if (holds != nullptr) {
    out.relations.contains = holds_doc;
    out.relations.contains_share = records::quantize_similarity(holds_share);
    verdict.contains = {holds->record.id, records::similarity_value(out.relations.contains_share)};
  }
  out.relations.paragraphs = static_cast<std::uint16_t>(std::min<std::size_t>(keys - anchors, 0xffff));
  out.relations.paragraphs_seen =
      static_cast<std::uint16_t>(std::min<std::uint32_t>(verdict.paragraphs_seen, 0xffff));
  return out;
}

StoreResult<> stored_relations(const Documents& docs, std::uint64_t doc, Verdict& verdict) {
  const StoreTables& tables = docs.tables();
  if (!tables.has_passages) return {};
  auto value = tables.relations.get(docs.txn(), coding::be64_key(doc));
  if (!value) {
    if (value.error().code == MDB_NOTFOUND) return {};
    return std::unexpected(from_lmdb(value.error()));
  }
  auto relations = records::Relations::decode(*value);
  if (!relations) return corrupt("relations of document " + std::to_string(doc));
  auto id_of = [&](std::uint64_t other) -> StoreResult<std::string> {
    auto record = docs.get(other);
    if (!record) return std::unexpected(record.error());
    return std::move(record->id);
  };
  const std::pair<std::uint64_t, std::uint16_t> related[] = {
      {relations->contained_in, relations->contained_share},
      {relations->contains, relations->contains_share}};
  Verdict::Related* fields[] = {&verdict.contained_in, &verdict.contains};
  for (int i = 0; i < 2; ++i) {
    if (related[i].first == 0) continue;
    auto id = id_of(related[i].first);
    if (!id) return std::unexpected(id.error());
    *fields[i] = {std::move(*id), records::similarity_value(related[i].second)};
  }
  verdict.paragraphs = relations->paragraphs;
  verdict.paragraphs_seen = relations->paragraphs_seen;
  for (std::uint64_t other : relations->paragraphs_from) {
    auto id = id_of(other);
    if (!id) return std::unexpected(id.error());
    verdict.paragraphs_from.push_back(std::move(*id));
  }
  return {};
}

}  // namespace neardup
