// What the index answers for one page, and where a page came from (for replay).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace neardup {

// What the index says about one page (or, for skipped/dead-lettered records, what the caller
// decided, stored so that a replay of the same offset is answered the same way).
struct Verdict {
  enum class Status : std::uint8_t { kUnique = 0, kDuplicate = 1, kSkipped = 2, kDeadLetter = 3 };
  // Which signatures found a stored page: bit 0 SimHash (within max_distance), bit 1 MinHash
  // (a shared LSH band at min_similarity or above).
  enum Method : std::uint8_t { kNone = 0, kSimHash = 1, kMinHash = 2, kBoth = 3 };

  Status status = Status::kUnique;
  std::string matched;       // kDuplicate: the SimHash match (nearest; ties: earliest seen), or
                             // else the MinHash match (most similar; ties: earliest seen)
  std::string duplicate_of;  // kDuplicate: first-seen id of matched's cluster
  int distance = 0;          // kDuplicate: Hamming distance to matched
  std::uint8_t method = kNone;  // kDuplicate: which signatures matched
  // kDuplicate: estimated Jaccard similarity to matched, rounded to 4 decimals (as stored); -1
  // when matched or the page has no sketch.
  double similarity = -1;
  // Containment (pages with passages, store/passages.h): the earlier page whose text holds most
  // of this page's (contained_in), and the earlier page whose text this page holds most of
  // (contains), each with the estimated share (of this page's anchors found there / of that
  // page's anchors found here), rounded to 4 decimals as stored; an empty id for none. Pages of
  // the page's own cluster are not named (the verdict says so already).
  struct Related {
    std::string id;
    double share = 0;
  };
  Related contained_in, contains;
  // Paragraphs: the page's tracked paragraphs, how many an earlier page published first, and
  // those pages (distinct, in paragraph order, at most kParagraphPages).
  std::uint32_t paragraphs = 0, paragraphs_seen = 0;
  std::vector<std::string> paragraphs_from;
  // Which of them were seen: their places among the page's paragraph hashes
  // (PageRequest::paragraphs), ascending; what output.main_text "unseen" leaves out.
  std::vector<std::uint16_t> paragraphs_seen_at;
  static constexpr std::size_t kParagraphPages = 8;
  // A page of a scheme that learns from the crawl (BatchLearner, index.h): the fingerprint it
  // was finished to and stored with (the tag's), and the lines of its main text dropped as its
  // site's learned boilerplate (ascending); stored with the verdict for its replays.
  std::optional<std::uint64_t> fingerprint;
  std::vector<std::uint32_t> boilerplate_lines;
  std::string reason;      // kSkipped / kDeadLetter: the reason code
  bool replayed = false;   // answered from stored state (same id+signatures, or replayed offset)
  // Entries the probe compared with this page (permuted-table candidates and LSH band
  // candidates); 0 when no probe ran (replays, skipped pages). Not stored.
  std::uint32_t candidates = 0;
  // Band probes that took only the first kBandCandidates documents of their key (a near-copy
  // storm: store/read_path.h). Not stored.
  std::uint32_t capped_bands = 0;
  // kDeadLetter decided by the index itself (an item that does not fit the store, Index::apply):
  // what was wrong. Not stored: a replay says "verdict stored for this offset".
  std::string detail;
  // The item's source offset was applied before with a different record (its digest differs
  // from the one stored, SourceOffset::digest): the verdict was decided afresh, not replayed,
  // and not recorded against the offset. Not stored.
  bool offset_conflict = false;
};

std::string_view status_name(Verdict::Status status);
// "simhash", "minhash", "both", or "" for none.
std::string_view method_name(std::uint8_t method);

// Where a record came from, for the daemon's offsets. Offline runs pass none.
struct SourceOffset {
  std::string partition;  // "topic/partition"
  std::int64_t offset = 0;
  // A digest of the record at that offset (XXH3-64 of its bytes; 0: unknown), stored with its
  // verdict: a replay of the offset gets the stored verdict only from the same record, so a
  // record that names another record's offset never takes its verdict.
  std::uint64_t digest = 0;
};

// The digest of a record's bytes for SourceOffset::digest (never 0).
std::uint64_t record_digest(std::string_view bytes);

}  // namespace neardup
