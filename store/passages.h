// The third signature in the index: containment and paragraphs seen before.
//
// A scheme's passages column (catalog.h, Scheme::passages) holds each anchor and paragraph hash
// of its pages (pipeline/passages/passages.h) once, with the first document that had it; a
// page's keys that no document holds yet become its own (logged in passage_log until merged,
// FORMAT.md). From the holders of a page's keys (Prober::holders), relate() decides:
// - contained_in: the live document outside the page's cluster that holds the most of the
//   page's anchors (ties: the earliest), when that is at least min_containment of them: most of
//   the page's text was published there first;
// - contains: a live document outside the page's cluster of which the page holds at least
//   min_containment of the anchors it had when stored (DocRecord::anchors), the largest share
//   (ties: the earliest): the page holds most of that page's text;
// - paragraphs: how many of the page's paragraphs a live document held already (its own
//   cluster's included: a copy's paragraphs were all published before) and those documents.
// A key whose holder is no longer live stays its own until a merge drops it.
//
//   prober.holders(catalog, *scheme.passages, page, holders);          // mutex held
//   auto related = relate(docs, page, holders, own_cluster, verdict);   // reads documents
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "store/read_path.h"
#include "store/records.h"

namespace neardup {

// The holders of a page's keys: (key index, document), key index i < anchors.size() for
// anchors[i], else paragraphs[i - anchors.size()].
using Holders = std::vector<std::pair<std::uint32_t, std::uint64_t>>;

// What relate() decided: the stored form (relations table) and the keys no document holds.
struct Related {
  records::Relations relations;
  std::vector<std::uint64_t> fresh;  // the page's keys to hold, ascending
};

// Fills verdict's contained_in, contains and paragraph fields from the holders of the page's
// keys; own_cluster: the page's cluster when it is a duplicate (0 when unique). Holders
// numbered `before` or later are left out: relate(..., old_doc) says again what a stored page
// was told (the keys it holds itself and later pages' are not "seen before"). Errors: reading
// documents (kCorrupt, LMDB's).
StoreResult<Related> relate(const Documents& docs, const PageRequest& page, Holders& holders,
                            std::uint64_t own_cluster, Verdict& verdict,
                            std::uint64_t before = ~std::uint64_t{0});

// The relations of a stored document as recorded (ids read from docs); nothing when it found
// none (its paragraphs are then not counted either) or the store has no relations table.
StoreResult<> stored_relations(const Documents& docs, std::uint64_t doc, Verdict& verdict);

}  // namespace neardup
