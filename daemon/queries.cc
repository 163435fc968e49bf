#include "daemon/queries.h"

#include "message/answers.h"
#include "message/processing.h"

namespace neardup::daemon {
namespace {

// An answer's JSON text (invalid UTF-8 in ids or texts replaced, never thrown).
std::string json_text(const nlohmann::json& json) {
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

ops::HttpAnswer store_failure(const StoreError& error) {
  return {500, json_text({{"error", "store"}, {"detail", error.message}})};
}

bool is_json(std::string_view content_type) {
  return content_type.substr(0, content_type.find(';')).find("json") != std::string_view::npos;
}

}  // namespace

ops::QueryHandlers query_handlers(Daemon& daemon, const ops::ConfigHolder& config) {
  ops::QueryHandlers handlers;
  handlers.max_body_bytes = config.current()->input.max_record_bytes;
  handlers.body_budget_bytes = kQueryBodyBudgetRecords * handlers.max_body_bytes;
  handlers.lookup = [&daemon, &config](std::string body,
                                       const std::string& content_type) -> ops::HttpAnswer {
    const std::shared_ptr<const Config> current = config.current();
    std::string scheme = scheme_id(*current);
    ProcessedRecord record =
        is_json(content_type)
            ? process_record_moved(std::move(body), current, std::move(scheme))
            : process_html(std::move(body), content_type, "", current, std::move(scheme));
    auto answer = daemon.lookup(record);
    if (!answer) return store_failure(answer.error());
    const nlohmann::json json = lookup_json(record, *answer);
    return {answer->dead_letter ? 400 : 200,
            json_text(json)};
  };
  handlers.page = [&daemon](const std::string& id) -> ops::HttpAnswer {
    auto described = daemon.describe_page(id, kQueryMaxMembers);
    if (!described) return store_failure(described.error());
    if (!*described) {
      return {404, json_text({{"error", "not_found"}, {"id", id}})};
    }
    return {200, json_text(**described)};
  };
  handlers.explain = [&daemon](const std::string& id, const std::string& with) -> ops::HttpAnswer {
    auto explained = daemon.explain_stored(id, with);
    if (!explained && explained.error().code == StoreError::Code::kNotFound) {
      return {404, json_text({{"error", "not_found"}, {"detail", explained.error().message}})};
    }
    if (!explained) return store_failure(explained.error());
    return {200, json_text(*explained)};
  };
  return handlers;
}

}  // namespace neardup::daemon
