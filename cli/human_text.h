// The answers of `neardup compare`, `lookup`, `show` and `stats` as text for a person: a verdict
// first, then the numbers behind it, one per row. Each is made from the JSON object the command
// prints with --json, so both say the same things:
//
//   if (format == OutputFormat::kJson) print_json_line(answer); else
//   print_text(compare_text(answer));
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace neardup::cli {

// compare's object: the verdict (and by which signature), the SimHash distance and the MinHash
// similarity against their thresholds, both fingerprints, the scheme; the sketches when the
// object holds them (--sketches).
std::string compare_text(const nlohmann::json& answer);

// One line for a page that was looked up: its name (a file, an id) and the `neardup` field it
// would get ("a.html: duplicate of p1 (matched p2 by SimHash: distance 1 bit, similarity 0.93)").
std::string lookup_text(std::string_view name, const nlohmann::json& tag);

// A line that is not a page (lookup --jsonl): its number and the dead letter's error.
std::string not_a_page_text(std::uint64_t line, const nlohmann::json& error);

// A stored page and its cluster (describe_page's object).
std::string page_text(const nlohmann::json& described);

// show --explain's object (explain_stored): what was decided, the SimHash distance block by
// block with the tables that find the pair, the MinHash bands they share, each page's verdict
// and relations; and that the index keeps no text.
std::string stored_explanation_text(const nlohmann::json& explained);

// stats's object.
std::string stats_text(const nlohmann::json& stats);

// 1234567 as "1,234,567".
std::string grouped(std::uint64_t n);

}  // namespace neardup::cli
