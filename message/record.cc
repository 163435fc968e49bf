#include "message/record.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "common/base64.h"

namespace neardup {
namespace {

std::expected<std::string, RecordError> optional_string(const nlohmann::json& object,
                                                        const std::string& field) {
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) return std::string();
  if (!it->is_string()) {
    return std::unexpected(RecordError{"wrong_type", field + ": must be a string, got " +
                                                         std::string(it->type_name())});
  }
  return it->get<std::string>();
}

// Days from 1970-01-01 to y-m-d (proleptic Gregorian), Howard Hinnant's algorithm.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

std::optional<std::int64_t> parse_rfc3339(const std::string& s) {
  int y, mo, d, h, mi, sec;
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2d%*1[Tt ]%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec,
                  &consumed) != 6) {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  std::size_t pos = static_cast<std::size_t>(consumed);
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
    int oh, om;
    if (std::sscanf(s.c_str() + pos + 1, "%2d:%2d", &oh, &om) != 2) return std::nullopt;
    offset_minutes = (oh * 60 + om) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
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
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (value.is_number_float()) return static_cast<std::int64_t>(value.get<double>());
  if (value.is_string()) return parse_rfc3339(value.get<std::string>());
  return std::nullopt;
}

std::expected<Page, RecordError> parse_page(std::string_view record, const InputFields& fields) {
  Page page;
  page.object = nlohmann::json::parse(record, nullptr, /*allow_exceptions=*/false);
  if (page.object.is_discarded()) {
    return std::unexpected(RecordError{"not_json", "the record is not valid JSON"});
  }
  if (!page.object.is_object()) {
    return std::unexpected(RecordError{
        "not_object", std::string("the record is JSON ") + page.object.type_name() +
                          ", not an object"});
  }
  auto url = optional_string(page.object, fields.url);
  if (!url) return std::unexpected(url.error());
  if (url->empty()) {
    return std::unexpected(RecordError{"missing_url", fields.url + ": required, missing or empty"});
  }
  page.url = std::move(*url);

  auto id = optional_string(page.object, fields.id);
  if (!id) return std::unexpected(id.error());
  page.id = id->empty() ? page.url : std::move(*id);

  auto content_type = optional_string(page.object, fields.content_type);
  if (!content_type) return std::unexpected(content_type.error());
  page.content_type = std::move(*content_type);

  auto body = optional_string(page.object, fields.body);
  if (!body) return std::unexpected(body.error());
  auto body_base64 = optional_string(page.object, fields.body_base64);
  if (!body_base64) return std::unexpected(body_base64.error());
  if (!body_base64->empty()) {
    auto bytes = base64_decode(*body_base64);
    if (!bytes) return std::unexpected(RecordError{"invalid_base64", fields.body_base64 + ": " + bytes.error()});
    page.body = std::move(*bytes);
  } else {
    page.body = std::move(*body);
  }

  auto fetched_at = page.object.find(fields.fetched_at);
  if (fetched_at != page.object.end() && !fetched_at->is_null()) {
    page.fetched_at_ms = parse_fetched_at(*fetched_at);
    if (!page.fetched_at_ms) {
      return std::unexpected(RecordError{
          "bad_fetched_at", fields.fetched_at + ": must be RFC 3339 text or epoch milliseconds"});
    }
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
  }
  if (!tag.reason.empty()) out["reason"] = tag.reason;
  if (!tag.charset.empty()) {
    out["charset"] = tag.charset;
    out["charset_source"] = tag.charset_source;
  }
  return out;
}

bool body_omitted(const Tag& tag) { return tag.status == "skipped" && tag.reason == "too_large"; }

std::string render_output(const Page& page, const Tag& tag, const OutputConfig& output,
                          const InputFields& fields) {
  nlohmann::json object = page.object;
  if (!output.include_body || body_omitted(tag)) {
    object.erase(fields.body);
    object.erase(fields.body_base64);
  }
  object["neardup"] = tag_to_json(tag);
  return object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace neardup
