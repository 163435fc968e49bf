#include "store/table_design.h"

#include <algorithm>
#include <cmath>

#include "store/run.h"

namespace neardup {
namespace {

std::uint64_t low_mask(std::uint32_t bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

// The design with the checked bits its buckets need at `documents` (for_store).
TableDesign sized(TableDesign design, std::uint64_t documents) {
  design.checked_bits = TableDesign::checked_bits_for(
      design.k, static_cast<double>(design.tables()) * design.bucket_entries(documents));
  return design;
}

}  // namespace

TableDesign TableDesign::make(std::uint32_t k, std::uint32_t r) {
  TableDesign design{.k = k, .r = r};
  const std::uint32_t blocks = k + r;
  for (std::uint32_t b = 0; b < blocks; ++b) {
    design.block_width.push_back(64 / blocks + (b < 64 % blocks ? 1 : 0));
  }
  // Every r-subset of the blocks, in lexicographic order, then the remaining blocks.
  std::vector<bool> chosen(blocks, false);
  std::fill(chosen.begin(), chosen.begin() + r, true);
  do {
    std::vector<std::uint32_t> order;
    for (std::uint32_t b = 0; b < blocks; ++b)
      if (chosen[b]) order.push_back(b);
    for (std::uint32_t b = 0; b < blocks; ++b)
      if (!chosen[b]) order.push_back(b);
    design.block_order.push_back(std::move(order));
  } while (std::prev_permutation(chosen.begin(), chosen.end()));

  std::vector<std::uint32_t> shift(blocks);  // where block b sits in the fingerprint
  for (std::uint32_t b = blocks, at = 0; b-- > 0;) {
    shift[b] = at;
    at += design.block_width[b];
  }
  for (const auto& order : design.block_order) {
    std::vector<Move> moves;
    std::uint32_t to = 64;
    for (std::uint32_t b : order) {
      to -= design.block_width[b];
      moves.push_back({shift[b], to, low_mask(design.block_width[b])});
    }
    design.moves.push_back(std::move(moves));
  }
  return design;
}

std::expected<TableDesign, std::string> TableDesign::for_store(std::uint32_t k,
                                                               std::uint64_t expected_documents,
                                                               std::uint32_t tables) {
  if (k + 1 > 64) return std::unexpected("store.design_k: must be < 64, got " + std::to_string(k));
  if (tables != 0) {
    std::string valid;
    const std::vector<std::uint64_t> counts = allowed_table_counts(k);
    for (std::uint32_t r = 1; r <= counts.size(); ++r) {
      if (counts[r - 1] == tables) return sized(make(k, r), expected_documents);
      valid += (valid.empty() ? "" : ", ") + std::to_string(counts[r - 1]);
    }
    return std::unexpected("store.tables: design_k " + std::to_string(k) +
                           " allows C(k + r, r) tables up to " + std::to_string(kMaxTables) +
                           " (" + (valid.empty() ? "none" : valid) + "), got " +
                           std::to_string(tables));
  }
  // Fewest tables whose average prefix bucket stays within a page of packed entries: a table
  // costs a cold page per probe and one entry per insert and merge, a candidate in a bucket a
  // few nanoseconds (an Elias–Fano key read and compared). The
  // bucket size is computed before any table is enumerated: large k would need millions.
  for (std::uint32_t r = 1;; ++r) {
    const std::uint32_t blocks = k + r;
    const std::uint32_t narrow = 64 / blocks, wide_blocks = 64 % blocks;
    const std::uint32_t narrow_chosen = std::min(r, blocks - wide_blocks);
    const std::uint32_t prefix = narrow_chosen * narrow + (r - narrow_chosen) * (narrow + 1);
    const double bucket =
        static_cast<double>(expected_documents) / std::ldexp(1.0, static_cast<int>(prefix));
    if (bucket <= kMaxBucketEntries || blocks + 1 > 64) {
      if (binomial(blocks, r) > kMaxTables) {
        return std::unexpected(
            "store.design_k: " + std::to_string(k) + " at store.expected_documents " +
            std::to_string(expected_documents) + " needs " + std::to_string(binomial(blocks, r)) +
            " tables, more than " + std::to_string(kMaxTables) +
            " (each costs memory and a probe per page): lower store.design_k (3 finds "
            "near-duplicates; MinHash finds the partial copies) or store.expected_documents");
      }
      return sized(make(k, r), expected_documents);
    }
  }
}

double TableDesign::false_candidate_chance(std::uint32_t k, std::uint32_t bits) {
  double within = 0, choose = 1;  // C(bits, i)
  for (std::uint32_t i = 0; i <= std::min(k, bits); ++i) {
    within += choose;
    choose = choose * (bits - i) / (i + 1);
  }
  return within / std::ldexp(1.0, static_cast<int>(bits));
}

std::uint32_t TableDesign::checked_bits_for(std::uint32_t k, double candidates) {
  std::uint32_t bits = kCheckedBits;
  while (bits < 64 && candidates * false_candidate_chance(k, bits) >= kFalseCandidates) ++bits;
  return bits;
}

std::uint32_t TableDesign::prefix_bits(std::size_t table) const {
  std::uint32_t bits = 0;
  for (std::uint32_t i = 0; i < r; ++i) bits += block_width[block_order[table][i]];
  return bits;
}

std::uint32_t TableDesign::kept_key_bits() const {
  std::uint32_t widest = 0;
  for (std::size_t t = 0; t < tables(); ++t) widest = std::max(widest, prefix_bits(t));
  return std::clamp(widest + checked_bits, kMinKeptBits, std::uint32_t{64});
}

std::uint64_t TableDesign::permute(std::size_t table, std::uint64_t fingerprint) const {
  std::uint64_t key = 0;
  for (const Move& m : moves[table]) key |= ((fingerprint >> m.from) & m.mask) << m.to;
  return key;
}

double TableDesign::bucket_entries(std::uint64_t documents) const {
  std::uint32_t narrowest = 64;
  for (std::size_t t = 0; t < tables(); ++t) narrowest = std::min(narrowest, prefix_bits(t));
  return static_cast<double>(documents) / std::ldexp(1.0, static_cast<int>(narrowest));
}

}  // namespace neardup
