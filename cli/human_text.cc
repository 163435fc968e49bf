#include "cli/human_text.h"

#include <cstdio>

namespace neardup::cli {
namespace {

// Rows of "  label   value", the values aligned.
constexpr std::size_t kLabelWidth = 20;

void append_row(std::string& out, std::string_view label, std::string_view value) {
  out += "  ";
  out += label;
  out.append(label.size() < kLabelWidth ? kLabelWidth - label.size() : 1, ' ');
  out += value;
  out += '\n';
}

std::string string_of(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A threshold as configured: 0.45, 1.
std::string threshold(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// An estimated similarity: 0.961, 1.000.
std::string similarity(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

std::string bits(int n) { return std::to_string(n) + (n == 1 ? " bit" : " bits"); }

// "SimHash", "MinHash" or "SimHash and MinHash" for a verdict's method.
std::string signatures(std::string_view method) {
  if (method == "simhash") return "SimHash";
  if (method == "minhash") return "MinHash";
  if (method == "both") return "SimHash and MinHash";
  return std::string(method);
}

// What a tag or a stored page's verdict says, in one phrase: "unique", "skipped (low_content)",
// "duplicate of ROOT (found by SimHash: distance 1 bit, similarity 0.930)", with "matched ID, "
// when the page found is not the cluster's first. A tag names the first page `duplicate_of`, a
// stored page `cluster`.
std::string verdict_phrase(const nlohmann::json& verdict) {
  const std::string status = string_of(verdict, "status");
  if (status == "skipped") return std::string("skipped (") + string_of(verdict, "reason") + ")";
  if (status != "duplicate") return status;
  const std::string root = verdict.contains("duplicate_of") ? string_of(verdict, "duplicate_of")
                                                            : string_of(verdict, "cluster");
  const std::string matched = string_of(verdict, "matched");
  std::string text = "duplicate of " + root + " (";
  if (matched != root) text += "matched " + matched + ", ";
  if (verdict.contains("method"))
    text += "found by " + signatures(string_of(verdict, "method")) + ": ";
  text += "distance " + bits(verdict.value("distance", 0));
  if (verdict.contains("similarity")) {
    text += ", similarity " + similarity(verdict["similarity"].get<double>());
  }
  return text + ")";
}

std::string side_text(const nlohmann::json& side) {
  if (string_of(side, "status") == "skipped")
    return std::string("skipped (") + string_of(side, "reason") + ")";
  return string_of(side, "fingerprint") + " (" + grouped(side.value("features", 0)) + " features)";
}

// Bytes for a person: "512 B", "23.4 MiB".
std::string byte_size(std::uint64_t n) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(n);
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", value, kUnits[unit]);
  return text;
}

}  // namespace

std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

namespace {

// "paragraph 4, word 120" (1-based for a person) of one side of a shared stretch.
std::string place(const nlohmann::json& at) {
  return "paragraph " + grouped(at.value("paragraph", std::uint64_t{0}) + 1) + ", word " +
         grouped(at.value("word", std::uint64_t{0}) + 1);
}

// "412 of 430 words (96%)".
std::string share(std::uint64_t part, std::uint64_t whole) {
  std::string out = grouped(part) + " of " + grouped(whole) + " words";
  if (whole > 0) out += " (" + std::to_string(part * 100 / whole) + "%)";
  return out;
}

// compare --explain's object: the words each text shares, then the shared paragraphs and the
// longest shared runs with their places in A and in B.
std::string explanation_text(const nlohmann::json& e) {
  const auto count = [](const nlohmann::json& pair, const char* side) {
    return pair.value(side, std::uint64_t{0});
  };
  std::string out = "what they share (the signatures' words: case, punctuation and numbers aside)\n";
  append_row(out, "of A in B", share(count(e["covered"], "a"), count(e["words"], "a")) +
                                   " in runs of 8 words or more");
  append_row(out, "of B in A", share(count(e["covered"], "b"), count(e["words"], "b")));
  const std::uint64_t shared = e.value("paragraphs_shared", std::uint64_t{0});
  append_row(out, "shared paragraphs", grouped(shared));
  for (const nlohmann::json& p : e["paragraphs"]) {
    out += "    A " + place(p["a"]) + " = B " + place(p["b"]) + ", " +
           grouped(p.value("words", std::uint64_t{0})) + " words: \"" + string_of(p, "text") + "\"\n";
  }
  if (!e["runs"].empty()) out += "  longest shared runs\n";
  for (const nlohmann::json& r : e["runs"]) {
    out += "    A " + place(r["a"]) + " = B " + place(r["b"]) + ", " +
           grouped(r.value("words", std::uint64_t{0})) + " words: \"" + string_of(r, "text") + "\"\n";
  }
  return out;
}

}  // namespace

std::string compare_text(const nlohmann::json& answer) {
  const std::string a = string_of(answer["a"], "file"), b = string_of(answer["b"], "file");
  const std::string verdict = string_of(answer, "verdict");
  std::string out = a + " and " + b;
  if (verdict == "not_comparable") {
    out += " cannot be compared:";
    for (const char* side : {"a", "b"}) {
      if (string_of(answer[side], "status") == "skipped") {
        out += std::string(" ") + string_of(answer[side], "file") + " was skipped (" +
               string_of(answer[side], "reason") + ")";
      }
    }
    return out + "\n";
  }
  out += verdict == "near_duplicate" ? std::string(" are near-duplicates, found by ") +
                                           signatures(string_of(answer, "method"))
                                     : " are different";
  out += '\n';
  append_row(out, "SimHash distance",
             bits(answer.value("distance", 0)) + " of 64 (near-duplicates at " +
                 std::to_string(answer.value("max_distance", 0)) + " or fewer)");
  if (answer.contains("similarity")) {
    append_row(out, "MinHash similarity",
               similarity(answer["similarity"].get<double>()) + " (near-duplicates at " +
                   threshold(answer.value("min_similarity", 1.0)) + " or more in a shared band; " +
                   (answer.value("shares_band", false) ? "a band is shared" : "no band is shared") +
                   ")");
  }
  if (answer.contains("containment")) {
    const nlohmann::json& c = answer["containment"];
    const std::string held = string_of(answer, "contained");
    append_row(out, "containment",
               similarity(c.value("a_in_b", 0.0)) + " of A found in B, " +
                   similarity(c.value("b_in_a", 0.0)) + " of B in A (" +
                   (held == "a_in_b"   ? "A is contained in B"
                    : held == "b_in_a" ? "B is contained in A"
                                       : "neither is contained") +
                   " at " + threshold(c.value("min_containment", 1.0)) + "); " +
                   std::to_string(c.value("paragraphs_shared", 0)) + " paragraphs shared");
  }
  append_row(out, "fingerprint of A", side_text(answer["a"]));
  append_row(out, "fingerprint of B", side_text(answer["b"]));
  for (const char* side : {"a", "b"}) {
    if (answer[side].contains("minhash")) {
      append_row(out, side[0] == 'a' ? "sketch of A" : "sketch of B",
                 string_of(answer[side], "minhash"));
    }
  }
  append_row(out, "scheme", string_of(answer, "scheme"));
  if (answer.contains("explain")) out += explanation_text(answer["explain"]);
  return out;
}

namespace {

// Rows for what a page's passages found (records.md): the page it is contained in, the page it
// contains, its paragraphs published before.
void append_relations(std::string& out, const nlohmann::json& tag) {
  if (tag.contains("contained_in")) {
    const nlohmann::json& r = tag["contained_in"];
    append_row(out, "contained in",
               string_of(r, "id") + " (" + similarity(r.value("containment", 0.0)) +
                   " of this text found there)");
  }
  if (tag.contains("contains")) {
    const nlohmann::json& r = tag["contains"];
    append_row(out, "contains",
               string_of(r, "id") + " (" + similarity(r.value("containment", 0.0)) +
                   " of that text found here)");
  }
  if (tag.contains("paragraphs")) {
    const nlohmann::json& p = tag["paragraphs"];
    std::string text = grouped(p.value("seen", 0)) + " of " + grouped(p.value("total", 0)) +
                       " published before";
    if (p.contains("first")) {
      text += ", first in";
      for (const auto& id : p["first"]) text.append(" ").append(id.get<std::string>());
    }
    append_row(out, "paragraphs", text);
  }
}

}  // namespace

std::string lookup_text(std::string_view name, const nlohmann::json& tag) {
  std::string out = std::string(name) + ": " + verdict_phrase(tag) + "\n";
  append_relations(out, tag);
  return out;
}

std::string not_a_page_text(std::uint64_t line, const nlohmann::json& error) {
  return std::string("line ") + std::to_string(line) + ": not a page (" +
         string_of(error, "error") + ": " + string_of(error, "detail") + ")\n";
}

std::string page_text(const nlohmann::json& described) {
  const nlohmann::json& page = described["page"];
  const nlohmann::json& cluster = described["cluster"];
  std::string out = string_of(page, "id") + ": " + verdict_phrase(page) + "\n";
  append_row(out, "fingerprint", string_of(page, "fingerprint"));
  append_row(out, "scheme", string_of(page, "scheme"));
  append_row(out, "first seen", string_of(page, "first_seen"));
  append_row(out, "stored at", string_of(page, "stored_at"));
  append_relations(out, page);
  const std::uint64_t size = cluster.value("size", std::uint64_t{0});
  append_row(out, "cluster",
             string_of(cluster, "root") + ", " + grouped(size) + (size == 1 ? " page" : " pages"));
  const nlohmann::json& members = cluster["members"];
  for (const auto& member : members) {
    append_row(out, std::string("  ") + string_of(member, "id"),
               std::string("first seen ") + string_of(member, "first_seen"));
  }
  if (size > members.size()) {
    append_row(out, "",
               std::string("and ") + grouped(size - members.size()) + " more (--max-members)");
  }
  return out;
}

namespace {

// Numbers of a JSON array, space-separated: "0 3 7", or "none".
std::string numbers(const nlohmann::json& list) {
  std::string out;
  for (const auto& n : list) {
    if (!out.empty()) out += ' ';
    out += std::to_string(n.get<std::int64_t>());
  }
  return out.empty() ? "none" : out;
}

}  // namespace

std::string stored_explanation_text(const nlohmann::json& explained) {
  const nlohmann::json& a = explained["a"];
  const nlohmann::json& b = explained["b"];
  const std::string a_id = string_of(a, "id"), b_id = string_of(b, "id");
  const nlohmann::json& stored = explained["stored"];
  std::string out = a_id + " and " + b_id + ": ";
  if (stored.value("matched", false)) {
    out += a_id + " was tagged a duplicate matching " + b_id + ", found by " +
           signatures(string_of(stored, "method")) + "\n";
  } else {
    out += a_id + " was not tagged a duplicate matching " + b_id + "\n";
  }
  const nlohmann::json& simhash = explained["simhash"];
  const int k = simhash.value("k", 0);
  append_row(out, "SimHash distance",
             bits(simhash.value("distance", 0)) + " of 64 (the index finds pairs at " +
                 std::to_string(k) + " or fewer; dedup.max_distance decides)");
  append_row(out, "bits per block", numbers(simhash["blocks"]) + " (most significant first)");
  append_row(out, "shared table keys",
             std::to_string(simhash["tables"].size()) + ": " + numbers(simhash["tables"]) +
                 " (a probe meets the pair there; the distance then decides)");
  if (explained.contains("minhash")) {
    const nlohmann::json& m = explained["minhash"];
    append_row(out, "MinHash similarity",
               similarity(m.value("similarity", 0.0)) + " (estimated from the stored sketches)");
    append_row(out, "bands shared",
               std::to_string(m["bands"].size()) + " of " + std::to_string(m.value("of", 0)) +
                   " (" + std::to_string(m.value("rows", 0)) + " rows each): " +
                   numbers(m["bands"]));
  }
  for (const nlohmann::json* page : {&a, &b}) {
    append_row(out, string_of(*page, "id"),
               verdict_phrase(*page) + "; fingerprint " + string_of(*page, "fingerprint") +
                   ", first seen " + string_of(*page, "first_seen"));
    append_relations(out, *page);
  }
  append_row(out, "text",
             "the index keeps no text: neardup compare --explain on the two pages shows the "
             "paragraphs and runs of words they share");
  return out;
}

std::string stats_text(const nlohmann::json& stats) {
  const nlohmann::json& design = stats["design"];
  std::string widths;
  for (const auto& w : design["block_bits"]) {
    if (!widths.empty()) widths += ',';
    widths += std::to_string(w.get<std::uint32_t>());
  }
  const std::uint64_t documents = stats.value("documents", std::uint64_t{0});
  const std::uint64_t bytes = stats.value("bytes_on_disk", std::uint64_t{0});
  std::string out = string_of(stats, "store") + ": " + grouped(documents) +
                    (documents == 1 ? " document\n" : " documents\n");
  std::string on_disk = byte_size(bytes);
  if (documents > 0)
    on_disk += std::string(", ") + grouped(bytes / documents) + " bytes per document";
  append_row(out, "on disk", on_disk);
  append_row(out, "map size", byte_size(stats.value("map_size", std::uint64_t{0})));
  append_row(out, "design",
             std::string("k=") + std::to_string(design.value("k", 0)) +
                 " r=" + std::to_string(design.value("r", 0)) + ", " +
                 std::to_string(design.value("tables", 0)) + " tables of " +
                 std::to_string(design.value("blocks", 0)) + " blocks (" + widths +
                 " bits), keys of " + std::to_string(design.value("table_key_bits", 64)) +
                 " bits (ids " + std::to_string(design.value("id_key_bits", 64)) + ")");
  for (const auto& scheme : stats["schemes"]) {
    std::string signatures_text = "SimHash";
    if (scheme.contains("minhash")) {
      const nlohmann::json& m = scheme["minhash"];
      signatures_text += std::string(" + MinHash (") + std::to_string(m.value("hashes", 0)) +
                         " hashes, LSH " + std::to_string(m.value("bands", 0)) + " bands x " +
                         std::to_string(m.value("rows", 0)) + " rows" +
                         (m.value("wide_bands", false) ? ", wide keys" : "") + ")";
    }
    append_row(out, std::string("scheme ") + string_of(scheme, "id"), signatures_text);
  }
  append_row(out, "sorted runs", grouped(stats.value("runs", std::uint64_t{0})));
  append_row(out, "pending verdicts", grouped(stats.value("pending_verdicts", std::uint64_t{0})));
  for (const auto& [partition, offset] : stats["applied_offsets"].items()) {
    append_row(out, "applied offset", partition + " " + std::to_string(offset.get<std::int64_t>()));
  }
  append_row(out, "format version", std::to_string(stats.value("format_version", 0)));
  return out;
}

}  // namespace neardup::cli
