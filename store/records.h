// The byte layouts of the store's LMDB records (store/FORMAT.md), each with its encoder and a
// decoder that rejects malformed bytes instead of reading past them. Pure functions over bytes:
// the index (catalog.h and its paths) and the column (column.h) read and write through these
// alone. The documents' records are in doc_records.h, what a verdict leaves in
// verdict_records.h; here the format version, the meta states, the sketches and fixed-width
// integers.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/doc_records.h"
#include "store/verdict_records.h"

namespace neardup::records {

// The on-disk format version these layouts make (meta "format"), and the oldest this build
// still opens: a version-5 store keeps all 16 bits of each sketch value in `sketches` (read
// alike: decode_sketch() tells the forms apart by length), a version-4 store besides that has
// pending verdicts without a digest of their record, which reads as "unknown"; stores of 7 and
// older hold wide document records only; stores of 8 and older hold no Elias–Fano run records
// (store/run.h), which a build of version 8 would misread; stores of 9 and older keep a `docs`
// record a document, of 10 and older every key of their tables and `ids` whole (KeyBits), of 11
// and older table keys of 40 or 64 bits only, of 12 and older no scheme with wide band keys
// (SchemeState::wide_bands). A writable open marks any of them this version (FORMAT.md).
inline constexpr std::uint32_t kFormatVersion = 13;
inline constexpr std::uint32_t kOldestReadableFormat = 4;

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
  // Whether its band keys hash 32 bits a value, the sketch's and its upper values
  // (common/sketch.h): set by the scheme's first page when it carries upper values (format 13);
  // encoded as a fifth u32 (1) only when set, so that a scheme stored before reads unset.
  bool wide_bands = false;

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

// sketch_highs: the high 8 bits of each value of a page's sketch, a byte per value, and for a
// scheme of wide band keys then the upper values of those its bands hold (the first bands x
// rows, u16 LE each), kept only while the page is past its band column's watermark (the band
// keys of its delta are rebuilt from them at open). Key: BE u32 scheme number, BE u64 document
// number.
std::string sketch_high_key(std::uint32_t scheme, std::uint64_t doc);
std::string encode_sketch_high(const std::vector<std::uint16_t>& sketch,
                               std::span<const std::uint16_t> upper = {});
// The whole sketch from its stored low bytes and its high bytes, and into `upper` (when given)
// the upper values they hold (empty when none); nullopt when the lengths do not fit.
std::optional<std::vector<std::uint16_t>> join_sketch(const std::vector<std::uint16_t>& low,
                                                      std::string_view high,
                                                      std::vector<std::uint16_t>* upper = nullptr);

// meta "format", "documents": a u32 / u64.
std::string encode_u32(std::uint32_t v);
std::string encode_u64(std::uint64_t v);
std::optional<std::uint32_t> decode_u32(std::string_view bytes);
std::optional<std::uint64_t> decode_u64(std::string_view bytes);

}  // namespace neardup::records
