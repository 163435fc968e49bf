// The byte layouts of the store's LMDB records (store/FORMAT.md), each with its encoder and a
// decoder that rejects malformed bytes instead of reading past them. Pure functions over bytes:
// the index (catalog.h and its paths) and the column (column.h) read and write through these
// alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/verdict.h"

namespace neardup::records {

// The on-disk format version these layouts make (meta "format"), and the oldest this build
// still opens: a version-5 store keeps all 16 bits of each sketch value in `sketches` (read
// alike: decode_sketch() tells the forms apart by length), a version-4 store besides that has
// pending verdicts without a digest of their record, which reads as "unknown"; stores of 7 and
// older hold wide document records only; stores of 8 and older hold no Elias–Fano run records
// (store/run.h), which a build of version 8 would misread; stores of 9 and older keep a `docs`
// record a document, of 10 and older every key of their tables and `ids` whole (KeyBits), of 11
// and older table keys of 40 or 64 bits only. A writable open marks any of them this version
// (FORMAT.md).
inline constexpr std::uint32_t kFormatVersion = 12;
inline constexpr std::uint32_t kOldestReadableFormat = 4;

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
  std::uint8_t method = 0;  // Verdict::Method
  std::uint16_t similarity = kNoSimilarity;  // estimated Jaccard x 10000
  std::uint32_t stored_at_s = 0;  // when the index stored it, seconds since the epoch
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

// meta "column/<name>": where a column's entries are.
struct ColumnState {
  struct Run {
    std::uint32_t id = 0;
    std::uint64_t entries = 0;
    bool operator==(const Run&) const = default;
  };
  std::uint64_t watermark = 0;  // documents <= watermark are in the runs
  std::uint32_t next_run = 1;
  std::vector<Run> runs;  // oldest first

  std::string encode() const;
  static std::optional<ColumnState> decode(std::string_view bytes);
  bool operator==(const ColumnState&) const = default;
};

// meta "scheme/<id>": the scheme's number and, when it has the second signature, its sketch
// length and LSH bands x rows (all 0 without).
struct SchemeState {
  std::uint32_t number = 0;
  std::uint32_t hashes = 0, bands = 0, rows = 0;

  bool has_minhash() const { return hashes > 0; }
  std::string encode() const;
  static std::optional<SchemeState> decode(std::string_view bytes);
  bool operator==(const SchemeState&) const = default;
};

// meta "design": k, r, tables; and for a shard of an index split by table and band
// (StoreConfig::shards > 1), its number and the number of shards. A whole index writes the
// first three alone, so a build that knows no shards refuses a shard's store (its design does
// not decode) rather than reading its part as the whole.
struct DesignState {
  std::uint32_t k = 0, r = 0, tables = 0;
  std::uint32_t shard = 0, shards = 1;
  std::string encode() const;
  static std::optional<DesignState> decode(std::string_view bytes);
  bool operator==(const DesignState&) const = default;
};

// meta "key_bits": u32 the bits of its key a table entry keeps, u32 those an `ids` entry keeps;
// each from 40 to 64: 64 the whole key (stores created before format 11), fewer its top bits
// (store/run.h, RunFormat::keeping). Format 11 wrote 40 or 64 only.
struct KeyBits {
  std::uint32_t tables = 64, ids = 64;
  std::string encode() const;
  static std::optional<KeyBits> decode(std::string_view bytes);
  bool operator==(const KeyBits&) const = default;
};

// sketches: document number -> its MinHash sketch's low kSketchBits (8) bits, a byte per value
// (what a verdict compares: common/sketch.h). Version 5 and older stored all 16 bits, u16
// little-endian each.
std::string encode_sketch(const std::vector<std::uint16_t>& sketch);
// The sketch of a scheme of `hashes` values in either form (a value holds 8 bits or 16);
// nullopt when the length is neither `hashes` nor twice it.
std::optional<std::vector<std::uint16_t>> decode_sketch(std::string_view bytes, std::size_t hashes);
// Whether decode_sketch() of these bytes holds every bit of each value (the older form).
inline bool whole_sketch(std::string_view bytes, std::size_t hashes) {
  return bytes.size() == 2 * hashes;
}

// sketch_highs: the high 8 bits of each value of a page's sketch, a byte per value, kept only
// while the page is past its band column's watermark (the band keys of its delta are rebuilt
// from them at open). Key: BE u32 scheme number, BE u64 document number.
std::string sketch_high_key(std::uint32_t scheme, std::uint64_t doc);
std::string encode_sketch_high(const std::vector<std::uint16_t>& sketch);
// The whole sketch from its stored low bytes and its high bytes; nullopt when the lengths
// differ.
std::optional<std::vector<std::uint16_t>> join_sketch(const std::vector<std::uint16_t>& low,
                                                      std::string_view high);

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

  bool empty() const {
    return contained_in == 0 && contains == 0 && paragraphs_seen == 0;
  }
  std::string encode() const;
  static std::optional<Relations> decode(std::string_view bytes);
  bool operator==(const Relations&) const = default;
};

// meta "format", "documents": a u32 / u64.
std::string encode_u32(std::uint32_t v);
std::string encode_u64(std::uint64_t v);
std::optional<std::uint32_t> decode_u32(std::string_view bytes);
std::optional<std::uint64_t> decode_u64(std::string_view bytes);

}  // namespace neardup::records

#include "common/coding.h"

namespace neardup::records {

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
