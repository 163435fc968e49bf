// What a verdict leaves in the store (store/FORMAT.md): the `pending` verdicts stored against a
// source offset, the `relations` of a document whose passages found something, and the
// `passage_log` of the keys a document was the first to hold. Pure functions over bytes; a
// decoder rejects malformed bytes instead of reading past them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/coding.h"
#include "store/verdict.h"

namespace neardup::records {

// Estimated Jaccard as stored (x 10000, rounded), and back.
std::uint16_t quantize_similarity(double similarity);
double similarity_value(std::uint16_t stored);  // -1 for kNoSimilarity

// pending: a verdict stored against an offset. status, distance, method, similarity (u16),
// then matched, duplicate_of, reason as (u32 length, bytes), then the u64 digest of the record
// it was given to (SourceOffset::digest; absent in version 4, and then decoded as 0), then, for
// a verdict with passages (version 7), u8 1, contained_in and contains as (u32 length, id, u16
// share x 10000), u16 paragraphs, u16 paragraphs seen, u8 n and n first pages as (u32 length,
// id), u16 m and the m places of the paragraphs seen (u16 each).
std::string encode_verdict(const Verdict& verdict, std::uint64_t digest);
std::optional<Verdict> decode_verdict(std::string_view bytes, std::uint64_t* digest = nullptr);

// pending key: partition length (u8), partition, the record's last offset as big-endian u64
// with the sign bit flipped (a partition's records are contiguous and in offset order).
std::string pending_key(std::string_view partition, std::int64_t offset);
// The key prefix shared by every pending record of a partition.
std::string pending_prefix(std::string_view partition);
// A pending record: consecutive entries of i64 offset, u32 length, encoded verdict.
void append_pending_entry(std::string& record, std::int64_t offset, std::string_view verdict);
// Calls fn(offset, encoded verdict) for each entry; false when the record is malformed.
template <typename Fn>
bool for_each_pending_entry(std::string_view record, Fn&& fn);

// passage_log: the keys (anchors, paragraph hashes) a document was the first to hold, added to
// its scheme's passages column, kept while the document is past that column's watermark (the
// delta is rebuilt from them at open). Key: as sketch_high_key. Value: the keys, u64 LE each.
std::string encode_keys(const std::vector<std::uint64_t>& keys);
std::optional<std::vector<std::uint64_t>> decode_keys(std::string_view bytes);

// relations: document number (BE u64) -> what its passages found when it was stored; only for
// documents that found something. Shares are x 10000.
struct Relations {
  std::uint64_t contained_in = 0, contains = 0;  // 0: none
  std::uint16_t contained_share = 0, contains_share = 0;
  std::uint16_t paragraphs = 0, paragraphs_seen = 0;
  std::vector<std::uint64_t> paragraphs_from;  // distinct first documents, at most 255

  bool empty() const { return contained_in == 0 && contains == 0 && paragraphs_seen == 0; }
  std::string encode() const;
  static std::optional<Relations> decode(std::string_view bytes);
  bool operator==(const Relations&) const = default;
};

template <typename Fn>
bool for_each_pending_entry(std::string_view record, Fn&& fn) {
  coding::ByteReader in(record);
  while (in.ok() && !in.done()) {
    const auto offset = static_cast<std::int64_t>(in.u64());
    std::string_view verdict = in.length_prefixed();
    if (!in.ok()) return false;
    fn(offset, verdict);
  }
  return in.ok();
}

}  // namespace neardup::records
