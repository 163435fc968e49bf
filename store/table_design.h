// The permuted-table design of the index (docs/index.md).
//
// Manku, Jain, Das Sarma, "Detecting Near-Duplicates for Web Crawling", WWW 2007: split the 64
// bits into k + r blocks of near-equal size; for each choice of r blocks, one table whose key is
// the fingerprint with those r blocks moved to the front. Two fingerprints within k bits differ
// in at most k blocks, so in some table their first r blocks (the table's prefix) are equal:
// probing every table's prefix bucket finds every neighbour, and a Hamming check on each
// candidate keeps the true ones. Hamming distance is unchanged by the permutation.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "common/table_counts.h"

namespace neardup {

struct TableDesign {
  std::uint32_t k = 0;
  std::uint32_t r = 0;
  std::vector<std::uint32_t> block_width;               // k + r blocks, most significant first
  std::vector<std::vector<std::uint32_t>> block_order;  // per table: its r blocks, then the rest

  // The design (k, r); requires 1 <= r and k + r <= 64.
  static TableDesign make(std::uint32_t k, std::uint32_t r);

  // The design for a store: with tables != 0, the r with C(k + r, r) == tables (an error names
  // the valid counts otherwise); with tables == 0, the smallest r whose prefix buckets hold at
  // most kMaxBucketEntries fingerprints on average at expected_documents (see FORMAT.md).
  // Either way a design of more than kMaxTables tables is an error. Its checked_bits are those
  // of checked_bits_for at expected_documents.
  static std::expected<TableDesign, std::string> for_store(std::uint32_t k,
                                                           std::uint64_t expected_documents,
                                                           std::uint32_t tables);
  // A bucket's keys in a run, about 15 bits each as Elias–Fano keys at this size, fill a 4 KiB
  // page: fewer tables with fuller buckets are cheaper until then (FORMAT.md, "Choosing r").
  static constexpr double kMaxBucketEntries = 2048;
  // More tables than this are refused (an error names the key): common/table_counts.h.
  static constexpr std::uint64_t kMaxTables = neardup::kMaxTables;

  std::size_t tables() const { return block_order.size(); }
  // Bits of table t's prefix: the widths of its first r blocks.
  std::uint32_t prefix_bits(std::size_t table) const;
  // The fingerprint's key in table t: its blocks concatenated in the table's order.
  std::uint64_t permute(std::size_t table, std::uint64_t fingerprint) const;
  // The bits of its key a new store's table entries keep (meta key_bits): the widest prefix and
  // checked_bits more, at least 40 and at most 64 (the whole key). A random stored fingerprint in
  // a probed prefix bucket passes the comparison within k of the kept bits (and costs a read of
  // its document, which confirms it) with the chance false_candidate_chance(k, checked_bits).
  std::uint32_t kept_key_bits() const;
  // The fewest bits, at least kCheckedBits, below the prefixes that let fewer than
  // kFalseCandidates of `candidates` random fingerprints (a page's probed buckets: the tables
  // times a bucket's entries) through a comparison within k bits, on average.
  static std::uint32_t checked_bits_for(std::uint32_t k, double candidates);
  // The chance that a random fingerprint is within k of a page's over `bits` compared bits.
  static double false_candidate_chance(std::uint32_t k, std::uint32_t bits);
  static constexpr std::uint32_t kCheckedBits = 24;
  static constexpr double kFalseCandidates = 0.1;
  std::uint32_t checked_bits = kCheckedBits;
  // Expected stored fingerprints per prefix bucket of the narrowest table at `documents`.
  double bucket_entries(std::uint64_t documents) const;

  // How permute() moves each block of table t: (fingerprint >> from & mask) << to.
  struct Move {
    std::uint32_t from = 0, to = 0;
    std::uint64_t mask = 0;
  };
  std::vector<std::vector<Move>> moves;
};

}  // namespace neardup
