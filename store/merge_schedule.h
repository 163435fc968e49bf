// Which running merges write how much in a batch (write_path.cc, BatchWriter::merge_slices).
//
// Every running merge has a deadline: the batches left before its column's new delta is half
// full (or one, when it is full again). Run alone, a merge would write remaining / batches left
// entries a batch and end on time. Run side by side, merges that start together (the wide
// columns of a scheme fill at the same page: four tables, `ids`, `members`) each keep their
// inputs and their half-written output at once, and their inputs are freed together at the end:
// the file grows by every merge's output before any page comes back. So the batch's work is
// the sum of those shares, spent earliest deadline first, one merge after another: the first
// merge ends and frees its inputs, which the next one's output then reuses (LMDB takes the
// pages a committed transaction freed), and the file grows by the largest merge, not by all of
// them (store/FORMAT.md, "Merges one after another"). Spending the summed shares earliest
// deadline first ends every merge by its own deadline (a merge's share alone would; EDF is
// optimal on one processor) and does the same work a batch as before.
//
// Pure: no LMDB, no columns; the caller maps budgets back to its merges.

#ifndef NEARDUP_STORE_MERGE_SCHEDULE_H_
#define NEARDUP_STORE_MERGE_SCHEDULE_H_

#include <cstdint>
#include <span>
#include <vector>

namespace neardup {

struct MergeDue {
  std::uint64_t remaining = 0;     // entries the merge has still to write
  std::uint64_t batches_left = 1;  // batches before it must be done (at least 1)
  bool idle = false;               // an idle scheme's merge: its own budget, at least `idle_budget`
  std::uint64_t least = 0;         // entries a slice of it writes at least: a record's (column.h)
};

// Entries each merge may write this batch, in the order given. Merges not idle share the sum
// of their shares, taken earliest deadline first (ties in the order given), each up to what it
// has left (a merge with nothing left counts as one entry: its last slice ends it); a merge
// that gets 0 writes nothing this batch. A merge's share is ceil(remaining /
// batches_left), and at least its `least` (or what it has left): a merge writes a whole record
// a slice (column.h), so merges written side by side each wrote at least that much a batch and
// ended well before their deadline; summed, the shares keep that pace, and the last merge of
// those started together ends when it did. An idle merge writes its share or `idle_budget`,
// whichever is more, outside the sum.
std::vector<std::uint64_t> plan_merge_budgets(std::span<const MergeDue> due,
                                              std::uint64_t idle_budget);

}  // namespace neardup

#endif  // NEARDUP_STORE_MERGE_SCHEDULE_H_
