// The index split by table and band (docs/scale-out.md): what one shard answers for a page, the
// record that carries the answer to the merge stage, and the merge stage's rule that makes of
// the S answers of a page the verdict one whole index gives it. Pure.
//
// A shard's store (StoreConfig::shards) holds its share of the permuted tables and LSH bands and
// every page's document, so its verdict for a page is the whole index's rule applied to the
// stored pages its share finds: the nearest SimHash match (ties to the earliest stored), else the
// most similar MinHash match, with the distance and similarity to it and which signatures found
// a match at all. The whole index's answer is the best of the shards' by the same rule, because
// every match the whole index finds, some shard finds (the tables and bands are split, not
// thinned), and the rule's order is total. What a shard cannot know is the cluster: the merge
// stage keeps every page's verdict as it decides it (Decisions) and takes the root from there.
//
// The candidates record (value of a record on kafka.candidates_topic; integers little-endian,
// strings a u32 length then the bytes):
//
//   "NDSA" u8 version (1)
//   u32 shard u32 shards
//   source topic (string) u32 partition u64 offset     -- the crawler's record it answers for
//   u8 status  matched (string)  u8 distance  u8 method  f64 similarity  u8 replayed
//   reason (string) detail (string)
//   fingerprinted (string): shard 0's copy of the fingerprinted record it applied (what the
//   merge stage renders the output from); empty from the other shards
//
// A newer version is refused by an older reader, never misread.
//
// A documents record (kafka.documents_topic, compacted): what a merge stage decided, for every
// merge stage to follow. Two kinds, told apart by key:
//   key: the page id;  value: "NDDC" u8 version (1), source topic (string) u32 partition
//        u64 offset, u8 status, matched (string), duplicate_of (string), u8 distance, u8 method,
//        f64 similarity               -- a page's decided verdict
//   key: "\0mark\0" source topic "/" partition;  value: "NDMK" u8 version (1), u64 offset
//                                    -- every record of that input partition up to the offset is
//                                       decided (pages, skipped records and dead letters alike)
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "store/verdict.h"

namespace neardup {

inline constexpr std::uint8_t kShardAnswerVersion = 1;

struct ShardAnswer {
  std::uint32_t shard = 0, shards = 1;
  std::string source_topic;
  std::int32_t source_partition = 0;
  std::int64_t source_offset = 0;
  // The shard's verdict; of it the record keeps status, matched, distance, method, similarity,
  // replayed, reason and detail (what the merge needs: not the shard's own cluster).
  Verdict verdict;
  std::string fingerprinted;
};

std::string encode_shard_answer(const ShardAnswer& answer);
// The answer, or why the bytes are not one.
std::expected<ShardAnswer, std::string> decode_shard_answer(std::string_view bytes);

// Where an input record was read: the crawler's topic, partition and offset.
struct SourcePosition {
  std::string topic;
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  bool operator==(const SourcePosition&) const = default;
  auto operator<=>(const SourcePosition&) const = default;
};

// A documents record, decoded.
struct DocumentsRecord {
  bool mark = false;      // a mark: every record of source's partition up to its offset
  std::string id;         // a page's: its id
  SourcePosition source;  // (a mark's offset is the last decided)
  Verdict verdict;        // a page's: status, matched, duplicate_of, distance, method, similarity
};
// Key and value of a page's record, and of a mark.
std::pair<std::string, std::string> encode_decided(const std::string& id,
                                                   const SourcePosition& source,
                                                   const Verdict& verdict);
std::pair<std::string, std::string> encode_mark(const SourcePosition& source);
std::expected<DocumentsRecord, std::string> decode_documents_record(std::string_view key,
                                                                    std::string_view value);

// A page's decided verdict (a unique or duplicate one that is not a replay), with where the page
// was read. That position stands for the whole index's order of storage when two matches tie
// (ties go to the earliest): within an input partition it is the order in which the pages were
// decided and stored; between partitions, which have no order, the lower partition goes first
// (docs/scale-out.md, "Order across partitions").
struct Decided {
  Verdict verdict;
  SourcePosition source;  // where the page was read
};

// Whether a verdict is one a page is decided by: unique or duplicate, and not a replay.
bool is_decision(const Verdict& verdict);

// What merge_answers reads of the pages the merge stages decided: by page id, the latest of
// each id (a re-crawl replaces it).
class DecidedPages {
 public:
  virtual ~DecidedPages() = default;
  // The page's decided verdict, if any.
  virtual std::optional<Decided> find(const std::string& id) const = 0;
};

// Decided pages in memory.
class Decisions final : public DecidedPages {
 public:
  std::optional<Decided> find(const std::string& id) const override;
  // Records a page's verdict as decided when it is a decision (is_decision; anything else is
  // ignored), read at `source`.
  void record(const std::string& id, const Verdict& verdict, const SourcePosition& source);
  // Forgets a page's verdict if it is the one decided at `source`.
  void forget(const std::string& id, const SourcePosition& source);
  std::size_t size() const { return decided_.size(); }

 private:
  std::unordered_map<std::string, Decided> decided_;
};

// The verdict of page `id` from its S shards' answers (one per shard, any order), against the
// pages decided so far:
// - a record every shard passed through without its store (skipped, dead letter): as answered;
// - answered by every shard from what it stored under the id (the same page again): the
//   verdict decided for it then, replayed;
// - otherwise the best of the shards' matches by the index's rule (SimHash before MinHash;
//   nearest, then most similar; ties to the earliest decided), of matches that are decided (a
//   page of another partition not yet decided is passed over: docs/scale-out.md, "Order across
//   partitions"), with the signatures that found any such match, and duplicate_of the root of
//   the match's cluster. None: unique.
Verdict merge_answers(const std::string& id, std::span<const ShardAnswer> answers,
                      const DecidedPages& decisions);

}  // namespace neardup
