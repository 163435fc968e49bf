#include "warc/input_record.h"

#include <nlohmann/json.hpp>

#include "common/base64.h"
#include "message/record.h"

namespace neardup::warc {

std::string to_input_record(const WarcPage& page, const WarcOffset& where, std::string_view file,
                            const InputFields& fields) {
  nlohmann::json record = nlohmann::json::object();
  record[fields.url] = page.target_uri;
  if (!page.record_id.empty()) record[fields.id] = page.record_id;
  record[fields.body_base64] = base64_encode(page.body);
  if (!page.content_type.empty()) record[fields.content_type] = page.content_type;
  if (auto ms = parse_fetched_at(nlohmann::json(page.date))) record[fields.fetched_at] = *ms;
  nlohmann::json origin = {{"file", file}, {"offset", where.offset}};
  if (where.in_member > 0) origin["in_member"] = where.in_member;
  record["warc"] = std::move(origin);
  // Header values are bytes: invalid UTF-8 is replaced rather than refused.
  return record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace neardup::warc
