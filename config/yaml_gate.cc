#include "config/yaml_gate.h"

#include <yaml.h>

#include <memory>

namespace neardup {
namespace {

std::string at(const yaml_mark_t& mark) {
  return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1) +
         ": ";
}

struct ParserDeleter {
  void operator()(yaml_parser_t* parser) const {
    yaml_parser_delete(parser);
    delete parser;
  }
};

}  // namespace

std::expected<YamlShape, std::string> check_yaml(std::string_view text, const YamlLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return std::unexpected("the file is " + std::to_string(text.size()) +
                           " bytes; a config is at most " + std::to_string(limits.max_bytes));
  }
  std::unique_ptr<yaml_parser_t, ParserDeleter> parser(new yaml_parser_t);
  if (!yaml_parser_initialize(parser.get())) {
    delete parser.release();
    return std::unexpected("YAML parser: out of memory");
  }
  yaml_parser_set_input_string(parser.get(), reinterpret_cast<const unsigned char*>(text.data()),
                               text.size());
  YamlShape shape;
  std::size_t depth = 0, nodes = 0;
  for (;;) {
    yaml_event_t event;
    if (!yaml_parser_parse(parser.get(), &event)) {
      const yaml_parser_t& p = *parser;
      const yaml_mark_t& mark = p.problem_mark;
      std::string what = p.problem ? p.problem : "invalid YAML";
      if (p.context) what = std::string(p.context) + ": " + what;
      return std::unexpected(at(mark) + "YAML syntax error: " + what);
    }
    std::unique_ptr<yaml_event_t, void (*)(yaml_event_t*)> owned(&event, yaml_event_delete);
    const yaml_mark_t& mark = event.start_mark;
    switch (event.type) {
      case YAML_STREAM_END_EVENT:
        return shape;
      case YAML_DOCUMENT_START_EVENT:
        if (++shape.documents == 2) shape.second_document_line = mark.line + 1;
        break;
      case YAML_ALIAS_EVENT:
        return std::unexpected(at(mark) + "aliases (*" +
                               reinterpret_cast<const char*>(event.data.alias.anchor) +
                               ") are not supported in a config file; write the value out");
      case YAML_MAPPING_START_EVENT:
      case YAML_SEQUENCE_START_EVENT:
        if (++depth > limits.max_depth) {
          return std::unexpected(at(mark) + "nested deeper than " +
                                 std::to_string(limits.max_depth) + " levels");
        }
        [[fallthrough]];
      case YAML_SCALAR_EVENT:
        if (++nodes > limits.max_nodes) {
          return std::unexpected(at(mark) + "more than " + std::to_string(limits.max_nodes) +
                                 " values");
        }
        break;
      case YAML_MAPPING_END_EVENT:
      case YAML_SEQUENCE_END_EVENT:
        --depth;
        break;
      default:
        break;
    }
  }
}

}  // namespace neardup
