// The `docs` table's records (store/FORMAT.md, "docs"): a document's record in its compact and
// wide forms, and the blocks that hold consecutive compact records. Pure functions over bytes
// (store/docs_table.h reads and writes through them); a decoder rejects malformed bytes instead of
// reading past them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace neardup::records {

// docs: document number -> page, in one of two forms (FORMAT.md, "docs"). Compact (format 8):
// flag bytes, the fingerprint, varints relative to the document's own number and time, the
// sketch, then the id without its scheme prefix. Wide (formats 4-7): a 48-byte header, then
// the id. A store writes documents from its `compact_from` number on compactly (meta
// "docs_compact_from": 1 for a store created compact, the next number at the upgrade of an
// older one) and rewrites an older document in the form it has, so a record's form follows
// from its number alone.
inline constexpr std::uint64_t kNoCompactDocs = UINT64_MAX;  // a read-only open of format <= 7
// docs_block_from of a store of version 9 or older opened read-only: no blocks, no tail.
inline constexpr std::uint64_t kNoDocBlocks = UINT64_MAX;

struct DocRecord {
  static constexpr std::uint8_t kSuperseded = 1;  // flags: the id was re-indexed since
  static constexpr std::uint8_t kForgotten = 2;   // flags: removed by Index::forget
  // flags: an exact copy stored without SimHash table and MinHash band entries (index.h,
  // kIndexedCopies): lookups find its live copies instead.
  static constexpr std::uint8_t kUnindexed = 4;
  static constexpr std::uint16_t kNoSimilarity = 0xffff;

  std::uint64_t fingerprint = 0;
  std::uint64_t cluster = 0;  // first-seen document of its cluster (itself when unique)
  std::int64_t first_seen_ms = 0;
  std::uint64_t matched = 0;  // duplicate: the document it matched when stored, else 0
  std::uint32_t scheme = 0;
  std::uint8_t status = 0;  // Verdict::Status it got (unique or duplicate)
  std::uint8_t distance = 0;
  std::uint8_t flags = 0;
  std::uint8_t method = 0;                   // Verdict::Method
  std::uint16_t similarity = kNoSimilarity;  // estimated Jaccard x 10000
  std::uint32_t stored_at_s = 0;             // when the index stored it, seconds since the epoch
  // Its anchors (containment: store/passages.h), saturated at 65535; 0 for none (also every
  // document of a store of version 6 or older, whose two bytes here were reserved).
  std::uint16_t anchors = 0;
  std::string id;
  // Compact records only: the MinHash sketch's stored bytes (encode_sketch), empty without
  // one. A wide record's document keeps its sketch in the `sketches` table.
  std::string sketch;

  // The record of document `doc` in a store whose compact records start at `compact_from`.
  std::string encode(std::uint64_t doc, std::uint64_t compact_from) const {
    return doc >= compact_from ? encode_compact(doc) : encode_wide();
  }
  static std::optional<DocRecord> decode(std::string_view bytes, std::uint64_t doc,
                                         std::uint64_t compact_from) {
    return doc >= compact_from ? decode_compact(bytes, doc) : decode_wide(bytes);
  }
  // With a base (a later record of a block: DocBlock), the stored-at time is coded as its
  // difference from the base's and the id (past its scheme prefix) as the length of the part it
  // shares with the base's and the rest; the decoder must be given the same base.
  std::string encode_compact(std::uint64_t doc, const DocRecord* base = nullptr) const;
  std::string encode_wide() const;
  static std::optional<DocRecord> decode_compact(std::string_view bytes, std::uint64_t doc,
                                                 const DocRecord* base = nullptr);
  static std::optional<DocRecord> decode_wide(std::string_view bytes);
};

// docs blocks (format 10): the documents from a store's `docs_block_from` number on, in runs of
// consecutive numbers filling about a page each (store/docs_table.h), keyed by the first one's
// number (BE u64). Value: varint count, then each record as varint length and bytes: the first
// compact, each later one compact relative to the first (encode_compact with it as the base).
struct DocBlock {
  // The block of records numbered first, first + 1, ...
  static std::string encode(const std::vector<DocRecord>& records, std::uint64_t first);
  // Every record; nullopt when malformed.
  static std::optional<std::vector<DocRecord>> decode(std::string_view bytes, std::uint64_t first);
  // Record `doc` alone (the first, then `doc`'s, skipping those between); nullopt when malformed
  // or `doc` is not in the block.
  static std::optional<DocRecord> decode_one(std::string_view bytes, std::uint64_t first,
                                             std::uint64_t doc);
  // How many records the block holds; nullopt when malformed.
  static std::optional<std::uint64_t> count(std::string_view bytes);
  // The bytes a record of `size` bytes adds to a block (its length and itself).
  static std::size_t added_bytes(std::size_t size);
};

}  // namespace neardup::records
