#include "message/record.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>

#include "common/base64.h"

namespace neardup {
namespace {

// Days from 1970-01-01 to y-m-d (proleptic Gregorian), Howard Hinnant's algorithm.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool is_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

// Exactly `n` ASCII digits at s[pos..]; advances pos.
bool digits(const std::string& s, std::size_t& pos, int n, int& out) {
  out = 0;
  for (int i = 0; i < n; ++i, ++pos) {
    if (pos >= s.size() || s[pos] < '0' || s[pos] > '9') return false;
    out = out * 10 + (s[pos] - '0');
  }
  return true;
}

bool literal(const std::string& s, std::size_t& pos, std::string_view any_of) {
  if (pos >= s.size() || any_of.find(s[pos]) == std::string_view::npos) return false;
  ++pos;
  return true;
}

std::optional<std::int64_t> parse_rfc3339(const std::string& s) {
  int y, mo, d, h, mi, sec;
  std::size_t pos = 0;
  if (!digits(s, pos, 4, y) || !literal(s, pos, "-") || !digits(s, pos, 2, mo) ||
      !literal(s, pos, "-") || !digits(s, pos, 2, d) || !literal(s, pos, "Tt ") ||
      !digits(s, pos, 2, h) || !literal(s, pos, ":") || !digits(s, pos, 2, mi) ||
      !literal(s, pos, ":") || !digits(s, pos, 2, sec)) {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || sec > 60) {
    return std::nullopt;
  }
  std::int64_t millis = 0;
  if (pos < s.size() && s[pos] == '.') {
    std::int64_t scale = 100;
    for (++pos; pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; ++pos) {
      millis += (s[pos] - '0') * scale;
      scale /= 10;
    }
  }
  std::int64_t offset_minutes = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    const int sign = s[pos++] == '-' ? -1 : 1;
    int oh, om;
    if (!digits(s, pos, 2, oh) || !literal(s, pos, ":") || !digits(s, pos, 2, om) || oh > 23 ||
        om > 59) {
      return std::nullopt;
    }
    offset_minutes = (oh * 60 + om) * sign;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  std::int64_t seconds = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
                         offset_minutes * 60;
  return seconds * 1000 + millis;
}

}  // namespace

std::optional<std::int64_t> parse_fetched_at(const nlohmann::json& value) {
  // Epoch milliseconds within +-2^53 (what a double holds exactly; about +-285,000 years).
  constexpr std::int64_t kLimit = std::int64_t{1} << 53;
  if (value.is_number_unsigned()) {
    auto ms = value.get<std::uint64_t>();
    if (ms > static_cast<std::uint64_t>(kLimit)) return std::nullopt;
    return static_cast<std::int64_t>(ms);
  }
  if (value.is_number_integer()) {
    auto ms = value.get<std::int64_t>();
    if (ms > kLimit || ms < -kLimit) return std::nullopt;
    return ms;
  }
  if (value.is_number_float()) {
    const double ms = value.get<double>();
    // Compared as doubles before any cast: a cast of an out-of-range double is undefined.
    if (!(ms >= -static_cast<double>(kLimit) && ms <= static_cast<double>(kLimit)) ||
        ms != std::trunc(ms)) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(ms);
  }
  if (value.is_string()) return parse_rfc3339(value.get<std::string>());
  return std::nullopt;
}

bool json_depth_within(std::string_view text, std::size_t max_depth) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, whatever it is
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return false;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

namespace {

// One DOM parser per thread: its buffers grow to the largest record seen and are reused. It
// refuses documents nested much deeper than kMaxJsonDepth (simdjson's count differs a little
// between arrays and objects); nesting() then applies the exact bound.
simdjson::dom::parser& thread_parser() {
  thread_local simdjson::dom::parser parser = [] {
    simdjson::dom::parser p;
    // Out of memory here, parse() allocates again and reports it (MEMALLOC: not_json).
    [[maybe_unused]] auto error = p.allocate(std::size_t{1} << 16, kMaxJsonDepth + 2);
    return p;
  }();
  return parser;
}

// How deeply arrays and objects nest in value: 0 for a scalar, 1 for [1], 2 for {"a":[1]}. The
// recursion is bounded by the parser's depth limit.
std::size_t nesting(simdjson::dom::element value) {
  std::size_t deepest = 0;
  simdjson::dom::array array;
  simdjson::dom::object object;
  if (!value.get(array)) {
    for (simdjson::dom::element child : array) deepest = std::max(deepest, nesting(child));
  } else if (!value.get(object)) {
    for (simdjson::dom::key_value_pair member : object) {
      deepest = std::max(deepest, nesting(member.value));
    }
  } else {
    return 0;
  }
  return deepest + 1;
}

const char* type_name(simdjson::dom::element_type type) {
  switch (type) {
    case simdjson::dom::element_type::ARRAY:
      return "array";
    case simdjson::dom::element_type::OBJECT:
      return "object";
    case simdjson::dom::element_type::STRING:
      return "string";
    case simdjson::dom::element_type::BOOL:
      return "boolean";
    case simdjson::dom::element_type::NULL_VALUE:
      return "null";
    default:
      return "number";
  }
}

// The string value of a field, or "" when absent or null.
std::expected<std::string_view, RecordError> optional_string(
    const std::optional<simdjson::dom::element>& value, const std::string& field) {
  if (!value || value->is_null()) return std::string_view();
  std::string_view text;
  if (value->get(text)) {
    return std::unexpected(
        RecordError{"wrong_type", field + ": must be a string, got " + type_name(value->type())});
  }
  return text;
}

// A scalar as the JSON value parse_fetched_at reads (containers never are a time).
nlohmann::json to_json_scalar(simdjson::dom::element value) {
  switch (value.type()) {
    case simdjson::dom::element_type::INT64:
      return value.get_int64().value_unsafe();
    case simdjson::dom::element_type::UINT64:
      return value.get_uint64().value_unsafe();
    case simdjson::dom::element_type::DOUBLE:
      return value.get_double().value_unsafe();
    case simdjson::dom::element_type::STRING:
      return value.get_string().value_unsafe();
    case simdjson::dom::element_type::BOOL:
      return value.get_bool().value_unsafe();
    default:
      return nlohmann::json::array();
  }
}

static_assert(kRecordPadding >= simdjson::SIMDJSON_PADDING);

std::optional<RecordError> too_large(std::size_t size, const InputConfig& input) {
  if (size <= input.max_record_bytes) return std::nullopt;
  return record_too_large(size, input);
}

// Reads page.record, whose capacity holds kRecordPadding bytes past its end, into the rest of
// `page`.
std::optional<RecordError> read_page(Page& page, const InputConfig& input) {
  const InputFields& fields = input.fields;
  simdjson::dom::element root;
  const auto error = thread_parser().parse(page.record.data(), page.record.size(), false).get(root);
  if (error == simdjson::DEPTH_ERROR || (!error && nesting(root) > kMaxJsonDepth)) {
    return RecordError{"too_deep",
                       "arrays or objects nested deeper than " + std::to_string(kMaxJsonDepth)};
  }
  if (error) {
    return RecordError{
        "not_json", std::string("the record is not valid JSON: ") + simdjson::error_message(error)};
  }
  simdjson::dom::object object;
  if (root.get(object)) {
    return RecordError{"not_object", std::string("the record is JSON ") + type_name(root.type()) +
                                         ", not an object"};
  }
  // One pass over the members; of repeated names the last one counts.
  std::optional<simdjson::dom::element> url_value, id_value, type_value, body_value, base64_value,
      fetched_value;
  for (const simdjson::dom::key_value_pair member : object) {
    const std::string_view key = member.key;
    if (key == fields.url) url_value = member.value;
    if (key == fields.id) id_value = member.value;
    if (key == fields.content_type) type_value = member.value;
    if (key == fields.body) body_value = member.value;
    if (key == fields.body_base64) base64_value = member.value;
    if (key == fields.fetched_at) fetched_value = member.value;
    if (key == "neardup") page.has_neardup_field = true;
  }
  auto url = optional_string(url_value, fields.url);
  if (!url) return url.error();
  if (url->empty()) {
    return RecordError{"missing_url", fields.url + ": required, missing or empty"};
  }
  page.url = *url;

  auto id = optional_string(id_value, fields.id);
  if (!id) return id.error();
  page.id = id->empty() ? page.url : std::string(*id);

  auto content_type = optional_string(type_value, fields.content_type);
  if (!content_type) return content_type.error();
  page.content_type = *content_type;

  auto body = optional_string(body_value, fields.body);
  if (!body) return body.error();
  auto body_base64 = optional_string(base64_value, fields.body_base64);
  if (!body_base64) return body_base64.error();
  if (!body_base64->empty()) {
    auto bytes = base64_decode(*body_base64);
    if (!bytes) return RecordError{"invalid_base64", fields.body_base64 + ": " + bytes.error()};
    page.body = std::move(*bytes);
  } else {
    page.body = *body;
  }

  if (fetched_value && !fetched_value->is_null()) {
    page.fetched_at_ms = parse_fetched_at(to_json_scalar(*fetched_value));
    if (!page.fetched_at_ms) {
      return RecordError{"bad_fetched_at",
                         fields.fetched_at + ": must be RFC 3339 text or epoch milliseconds"};
    }
  }
  return std::nullopt;
}

}  // namespace

RecordError record_too_large(std::uint64_t size, const InputConfig& input) {
  return RecordError{"record_too_large", std::to_string(size) + " bytes > input.max_record_bytes " +
                                             std::to_string(input.max_record_bytes)};
}

std::expected<Page, RecordError> parse_page(std::string_view record, const InputConfig& input) {
  if (auto error = too_large(record.size(), input)) return std::unexpected(std::move(*error));
  Page page;
  // The record is kept for the output anyway; its copy, with the padding simdjson reads past the
  // end of a document, is what gets parsed.
  page.record.reserve(record.size() + kRecordPadding);
  page.record.assign(record);
  if (auto error = read_page(page, input)) return std::unexpected(std::move(*error));
  return page;
}

std::expected<Page, RecordError> parse_page_moved(std::string&& record, const InputConfig& input) {
  if (auto error = too_large(record.size(), input)) return std::unexpected(std::move(*error));
  if (record.capacity() < record.size() + kRecordPadding) {
    record.reserve(record.size() + kRecordPadding);
  }
  Page page;
  page.record = std::move(record);
  if (auto error = read_page(page, input)) {
    record = std::move(page.record);
    return std::unexpected(std::move(*error));
  }
  return page;
}

nlohmann::json tag_to_json(const Tag& tag) {
  nlohmann::json out{{"status", tag.status}};
  if (!tag.fingerprint.empty()) out["fingerprint"] = tag.fingerprint;
  out["scheme"] = tag.scheme;
  if (tag.status == "duplicate") {
    out["duplicate_of"] = tag.duplicate_of;
    out["matched"] = tag.matched;
    out["distance"] = tag.distance;
    if (!tag.method.empty()) out["method"] = tag.method;
    if (tag.similarity >= 0) out["similarity"] = tag.similarity;
  }
  if (!tag.reason.empty()) out["reason"] = tag.reason;
  if (!tag.charset.empty()) {
    out["charset"] = tag.charset;
    out["charset_source"] = tag.charset_source;
  }
  add_relations_json(out, tag);
  if (!tag.site_boilerplate.empty()) out["site_boilerplate"] = tag.site_boilerplate;
  if (tag.text) out["text"] = *tag.text;
  return out;
}

void add_relations_json(nlohmann::json& out, const Tag& tag) {
  for (const auto& [key, related] : {std::pair{"contained_in", &tag.contained_in},
                                     std::pair{"contains", &tag.contains}}) {
    if (!related->id.empty()) {
      out[key] = {{"id", related->id}, {"containment", related->share}};
    }
  }
  if (tag.paragraphs > 0) {
    nlohmann::json& p = out["paragraphs"];
    p = {{"total", tag.paragraphs}, {"seen", tag.paragraphs_seen}};
    if (!tag.paragraphs_first.empty()) p["first"] = tag.paragraphs_first;
  }
}

namespace {

// Whether s needs no escaping in JSON and is valid UTF-8 as it is: printable ASCII other than
// a quote or a backslash.
bool plain_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return c >= 0x20 && c < 0x7F && c != '"' && c != '\\'; });
}

// Appends `"key":` to an object being written, after a comma unless it is the first member.
void append_key(std::string& out, std::string_view key) {
  out += out.size() > 1 ? ",\"" : "\"";
  out += key;
  out += "\":";
}

void append_string_member(std::string& out, std::string_view key, std::string_view value) {
  append_key(out, key);
  out += '"';
  out += value;
  out += '"';
}

}  // namespace

std::string tag_json_text(const Tag& tag) {
  const bool duplicate = tag.status == "duplicate";
  const bool plain =
      plain_ascii(tag.status) && plain_ascii(tag.fingerprint) && plain_ascii(tag.scheme) &&
      plain_ascii(tag.reason) && plain_ascii(tag.charset) && plain_ascii(tag.charset_source) &&
      (!duplicate ||
       (plain_ascii(tag.duplicate_of) && plain_ascii(tag.matched) && plain_ascii(tag.method))) &&
      plain_ascii(tag.contained_in.id) && plain_ascii(tag.contains.id) &&
      std::all_of(tag.paragraphs_first.begin(), tag.paragraphs_first.end(),
                  [](const std::string& id) { return plain_ascii(id); }) &&
      (!tag.text || plain_ascii(*tag.text));
  if (!plain) {
    return tag_to_json(tag).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  // tag_to_json's members in the order its object keeps them (by name).
  std::string out = "{";
  if (!tag.charset.empty()) {
    append_string_member(out, "charset", tag.charset);
    append_string_member(out, "charset_source", tag.charset_source);
  }
  for (const auto& [key, related] : {std::pair{"contained_in", &tag.contained_in},
                                     std::pair{"contains", &tag.contains}}) {
    if (related->id.empty()) continue;
    append_key(out, key);
    out += "{\"containment\":";
    out += nlohmann::json(related->share).dump();
    out += ",\"id\":\"";
    out += related->id;
    out += "\"}";
  }
  if (duplicate) {
    append_key(out, "distance");
    out += std::to_string(tag.distance);
    append_string_member(out, "duplicate_of", tag.duplicate_of);
  }
  if (!tag.fingerprint.empty()) append_string_member(out, "fingerprint", tag.fingerprint);
  if (duplicate) {
    append_string_member(out, "matched", tag.matched);
    if (!tag.method.empty()) append_string_member(out, "method", tag.method);
  }
  if (tag.paragraphs > 0) {
    append_key(out, "paragraphs");
    out += '{';
    if (!tag.paragraphs_first.empty()) {
      out += "\"first\":[";
      for (std::size_t i = 0; i < tag.paragraphs_first.size(); ++i) {
        out += i == 0 ? "\"" : ",\"";
        out += tag.paragraphs_first[i];
        out += '"';
      }
      out += "],";
    }
    out += "\"seen\":" + std::to_string(tag.paragraphs_seen) +
           ",\"total\":" + std::to_string(tag.paragraphs) + "}";
  }
  if (!tag.reason.empty()) append_string_member(out, "reason", tag.reason);
  append_string_member(out, "scheme", tag.scheme);
  if (duplicate && tag.similarity >= 0) {
    append_key(out, "similarity");
    out += nlohmann::json(tag.similarity).dump();  // nlohmann's shortest form of a double
  }
  if (!tag.site_boilerplate.empty()) {
    append_key(out, "site_boilerplate");
    out += nlohmann::json(tag.site_boilerplate).dump();
  }
  append_string_member(out, "status", tag.status);
  if (tag.text) append_string_member(out, "text", *tag.text);
  out += '}';
  return out;
}

bool body_omitted(const Tag& tag) { return tag.status == "skipped" && tag.reason == "too_large"; }

std::string OutputParts::joined() const {
  std::string out;
  out.reserve(before.size() + inserted.size() + after.size());
  out.append(before).append(inserted).append(after);
  return out;
}

OutputParts render_output_parts(const Page& page, const Tag& tag, const OutputConfig& output,
                                const InputFields& fields) {
  const std::string tag_text = tag_json_text(tag);
  const bool drop_body = !output.include_body || body_omitted(tag);
  const std::size_t close = page.record.find_last_of('}');
  if (!drop_body && !page.has_neardup_field && close != std::string::npos) {
    // A parsed object with a url has a member before its closing brace.
    const std::string_view record = page.record;
    return OutputParts{.before = record.substr(0, close),
                       .inserted = ",\"neardup\":" + tag_text,
                       .after = record.substr(close)};
  }
  nlohmann::json object = nlohmann::json::parse(page.record, nullptr, /*allow_exceptions=*/false);
  if (drop_body) {
    object.erase(fields.body);
    object.erase(fields.body_base64);
  }
  object["neardup"] = nlohmann::json::parse(tag_text);
  return OutputParts{.inserted =
                         object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

std::string render_output(const Page& page, const Tag& tag, const OutputConfig& output,
                          const InputFields& fields) {
  return render_output_parts(page, tag, output, fields).joined();
}

}  // namespace neardup
