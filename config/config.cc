// Strict YAML loading of Config. One table, for_each_key() (keys.h), names every key with its path
// and its rule; parsing and the unknown-key check here (with integers.h, key_names.h and
// read_at_most.h), and to_yaml, scheme_id and
// restart_only_changes (config_text.cc) all walk that table, so a key added there is parsed,
// validated, printed, hashed and diffed alike.
#include "config/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <concepts>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <string_view>
#include <type_traits>
#include <utility>

#include "common/ascii.h"
#include "common/table_counts.h"
#include "config/integers.h"
#include "config/key_names.h"
#include "config/keys.h"
#include "config/read_at_most.h"
#include "config/yaml_gate.h"

namespace neardup {
namespace {

using namespace config_keys;  // NOLINT(google-build-using-namespace): config/'s own table

// --- Errors -------------------------------------------------------------------------------

// Collects "line N: path: message" lines; the line is left out where yaml-cpp has no mark.
class Errors {
 public:
  void add(const YAML::Mark& mark, std::string_view path, std::string_view message) {
    if (!text_.empty()) text_ += '\n';
    if (!mark.is_null()) text_ += cat("line ", mark.line + 1, ": ");
    text_ += cat(path.empty() ? "top level" : path, ": ", message);
  }
  bool empty() const { return text_.empty(); }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// A key found in the document: its key node (for the line of unknown or duplicate keys) and
// its value node.
struct Found {
  YAML::Node key;
  YAML::Node value;

  // The value's line, or the key's where the value has none (`ngram:` with nothing after it).
  YAML::Mark mark() const { return value.Mark().is_null() ? key.Mark() : value.Mark(); }
};

std::string describe(const YAML::Node& node, bool quote) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return "nothing";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Scalar:
      break;
  }
  return quote ? cat("\"", node.Scalar(), "\"") : node.Scalar();
}

// --- Readers: one per field type; each reports its own errors -----------------------------

template <std::unsigned_integral T>
void read(const Found& found, const Key& key, T& field, Errors& errors) {
  const std::uint64_t max = std::min<std::uint64_t>(key.max, std::numeric_limits<T>::max());
  const std::string range = range_text(key, max);
  ParsedInteger parsed;
  if (found.value.IsScalar()) parsed = parse_integer(found.value.Scalar(), key.size, key.duration);
  if (parsed.outcome == ParsedInteger::Outcome::kNotInteger) {
    std::string_view kind = key.size       ? "a size (bytes, or with KiB, MiB, GiB, TiB)"
                            : key.duration ? "a duration (seconds, or with s, m, h, d, w)"
                                           : "an integer";
    errors.add(found.mark(), key.path,
               cat("must be ", kind, " in ", range, ", got ", describe(found.value, false)));
  } else if (parsed.outcome == ParsedInteger::Outcome::kOutOfRange || parsed.value < key.min ||
             parsed.value > max) {
    errors.add(found.mark(), key.path, cat("must be ", range, ", got ", found.value.Scalar()));
  } else {
    field = static_cast<T>(parsed.value);
  }
}

// A decimal number such as 0.5 (also 1, .5, 5e-1) within [min_real, max_real].
void read(const Found& found, const Key& key, double& field, Errors& errors) {
  const std::string range = cat(canonical_real(key.min_real), "..", canonical_real(key.max_real));
  double value = 0;
  bool number = false;
  if (found.value.IsScalar()) {
    const std::string& text = found.value.Scalar();
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    number = ec == std::errc() && end == text.data() + text.size() && std::isfinite(value);
  }
  if (!number) {
    errors.add(found.mark(), key.path,
               cat("must be a number in ", range, ", got ", describe(found.value, false)));
  } else if (value < key.min_real || value > key.max_real) {
    errors.add(found.mark(), key.path, cat("must be ", range, ", got ", found.value.Scalar()));
  } else {
    field = value;
  }
}

// YAML 1.1 booleans, as yaml-cpp reads them: true/false, yes/no, on/off, any case.
void read(const Found& found, const Key& key, bool& field, Errors& errors) {
  const std::string text = found.value.IsScalar() ? ascii_lowercase(found.value.Scalar()) : "";
  if (text == "true" || text == "yes" || text == "on") {
    field = true;
  } else if (text == "false" || text == "no" || text == "off") {
    field = false;
  } else {
    errors.add(found.mark(), key.path,
               cat("must be true or false, got ", describe(found.value, false)));
  }
}

std::string join(std::span<const std::string_view> words, std::string_view separator) {
  std::string out;
  for (std::string_view word : words) {
    if (!out.empty()) out += separator;
    out += word;
  }
  return out;
}

template <class E>
requires std::is_enum_v<E>
void read(const Found& found, const Key& key, E& field, Errors& errors) {
  std::vector<std::string_view> names;
  for (const auto& [value, name] : Names<E>::values) {
    if (found.value.IsScalar() && found.value.Scalar() == name) {
      field = value;
      return;
    }
    names.push_back(name);
  }
  errors.add(found.mark(), key.path,
             cat("must be one of ", join(names, ", "), ", got ", describe(found.value, true)));
}

void read(const Found& found, const Key& key, std::string& field, Errors& errors) {
  std::string value = found.value.IsScalar() ? found.value.Scalar() : std::string();
  if (!found.value.IsScalar() || (key.check != nullptr && !key.check(value))) {
    errors.add(found.mark(), key.path,
               cat("must be ", key.expect.empty() ? "a string" : key.expect, ", got ",
                   describe(found.value, true)));
    return;
  }
  field = std::move(value);
}

// librdkafka properties that neardup sets itself, and why.
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kManagedProperties = {{
    {"bootstrap.servers", "set kafka.bootstrap_servers instead"},
    {"metadata.broker.list", "set kafka.bootstrap_servers instead"},
    {"group.id", "set kafka.group_id instead"},
    {"enable.auto.offset.store",
     "managed by neardup, which stores an offset only once its output is delivered"},
}};

// A property value: a scalar, or {file: PATH} / {env: NAME}.
std::optional<PropertyValue> property_value(const YAML::Node& node) {
  if (node.IsScalar()) return PropertyValue(node.Scalar());
  if (!node.IsMap() || node.size() != 1) return std::nullopt;
  const auto entry = node.begin();
  if (!entry->first.IsScalar() || !entry->second.IsScalar() || entry->second.Scalar().empty()) {
    return std::nullopt;
  }
  if (entry->first.Scalar() == "file") {
    return PropertyValue(PropertyValue::Source::kFile, entry->second.Scalar());
  }
  if (entry->first.Scalar() == "env") {
    return PropertyValue(PropertyValue::Source::kEnv, entry->second.Scalar());
  }
  return std::nullopt;
}

void read(const Found& found, const Key& key, PropertyValue& field, Errors& errors) {
  if (found.value.IsNull()) {
    field = PropertyValue();
  } else if (auto value = property_value(found.value)) {
    field = std::move(*value);
  } else {
    errors.add(found.mark(), key.path,
               cat("must be a string, or {file: PATH} or {env: NAME}, got ",
                   describe(found.value, false)));
  }
}

void read(const Found& found, const Key& key, PropertyMap& field, Errors& errors) {
  const YAML::Node& node = found.value;
  if (node.IsNull()) {
    field.clear();
    return;
  }
  if (!node.IsMap()) {
    errors.add(
        found.mark(), key.path,
        cat("must be a map of librdkafka property names to values, got ", describe(node, false)));
    return;
  }
  PropertyMap properties;
  for (const auto& entry : node) {
    const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : std::string();
    const std::string path = cat(key.path, ".", name);
    auto managed = std::ranges::find(kManagedProperties, name,
                                     &std::pair<std::string_view, std::string_view>::first);
    if (name.empty()) {
      errors.add(entry.first.Mark(), key.path, "property names must be non-empty strings");
    } else if (properties.contains(name)) {
      errors.add(entry.first.Mark(), path, "duplicate key");
    } else if (managed != kManagedProperties.end()) {
      errors.add(entry.first.Mark(), path, managed->second);
    } else if (auto value = property_value(entry.second)) {
      properties[name] = std::move(*value);
    } else {
      errors.add(entry.first.Mark(), path,
                 cat("must be a string, number or boolean, or {file: PATH} or {env: NAME}, got ",
                     describe(entry.second, false)));
    }
  }
  field = std::move(properties);
}

// Checks the shape of `node` (a section) and records every known key under it in `found`.
void collect(const YAML::Node& node, const std::string& section,
             std::map<std::string, Found>& found, Errors& errors) {
  if (node.IsNull()) return;  // an empty section keeps its defaults
  if (!node.IsMap()) {
    std::string sections = section.empty() ? "a map of sections" : "a map";
    errors.add(node.Mark(), section, cat("must be ", sections, ", got ", describe(node, false)));
    return;
  }
  const Schema& s = schema();
  std::set<std::string> seen;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) {
      errors.add(entry.first.Mark(), section,
                 cat("keys must be names, got ", describe(entry.first, false)));
      continue;
    }
    const std::string& name = entry.first.Scalar();
    const std::string path = join_path(section, name);
    // A dotted name is never a key: `features.ngram: 3` must be written nested.
    const bool plain = name.find('.') == std::string::npos;
    if (!seen.insert(name).second) {
      errors.add(entry.first.Mark(), path, "duplicate key");
    } else if (plain && s.is_leaf(path)) {
      found[path] = Found{entry.first, entry.second};
    } else if (plain && s.sections.contains(path)) {
      collect(entry.second, path, found, errors);
    } else {
      errors.add(entry.first.Mark(), path, "unknown key" + did_you_mean(section, name));
    }
  }
}

// --- Rules across keys ---------------------------------------------------------------------

YAML::Mark mark_of(const std::map<std::string, Found>& found, std::string_view path) {
  auto it = found.find(std::string(path));
  return it == found.end() ? YAML::Mark::null_mark() : it->second.mark();
}

void check_distinct(std::span<const std::pair<std::string_view, const std::string*>> keys,
                    const std::map<std::string, Found>& found, Errors& errors) {
  for (std::size_t j = 1; j < keys.size(); ++j) {
    for (std::size_t i = 0; i < j; ++i) {
      if (*keys[i].second == *keys[j].second) {
        errors.add(mark_of(found, keys[j].first), keys[j].first,
                   cat("must differ from ", keys[i].first, " (both \"", *keys[j].second, "\")"));
        break;
      }
    }
  }
}

void check_across_keys(const Config& c, const std::map<std::string, Found>& found, Errors& errors) {
  const std::array<std::pair<std::string_view, const std::string*>, 6> fields = {{
      {"input.fields.url", &c.input.fields.url},
      {"input.fields.id", &c.input.fields.id},
      {"input.fields.body", &c.input.fields.body},
      {"input.fields.body_base64", &c.input.fields.body_base64},
      {"input.fields.content_type", &c.input.fields.content_type},
      {"input.fields.fetched_at", &c.input.fields.fetched_at},
  }};
  check_distinct(fields, found, errors);
  const std::array<std::pair<std::string_view, const std::string*>, 6> topics = {{
      {"kafka.input_topic", &c.kafka.input_topic},
      {"kafka.output_topic", &c.kafka.output_topic},
      {"kafka.dead_letter_topic", &c.kafka.dead_letter_topic},
      {"kafka.fingerprint_topic", &c.kafka.fingerprint_topic},
      {"kafka.candidates_topic", &c.kafka.candidates_topic},
      {"kafka.documents_topic", &c.kafka.documents_topic},
  }};
  check_distinct(topics, found, errors);

  if (c.dedup.max_distance > c.store.design_k) {
    errors.add(
        mark_of(found, "dedup.max_distance"), "dedup.max_distance",
        cat("must be <= store.design_k (", c.store.design_k, "), got ", c.dedup.max_distance));
  }
  if (const LshDesign lsh = new_scheme_lsh(c.minhash); lsh.bands * lsh.rows > c.minhash.hashes) {
    errors.add(mark_of(found, "minhash.bands"), "minhash.bands",
               cat("bands x rows (", lsh.bands, " x ", lsh.rows,
                   requested_lsh(c.minhash).bands == 0 ? ", the default" : "",
                   ") must be <= minhash.hashes (", c.minhash.hashes, ")"));
  }
  if (c.store.max_map_size < c.store.map_size) {
    errors.add(mark_of(found, "store.max_map_size"), "store.max_map_size",
               cat("must be >= store.map_size (", format_size(c.store.map_size), "), got ",
                   format_size(c.store.max_map_size)));
  }
  if (c.store.shard >= c.store.shards) {
    errors.add(mark_of(found, "store.shard"), "store.shard",
               cat("must be below store.shards (", c.store.shards, "), got ", c.store.shard));
  }
  if (c.store.shards > 1) {
    // What a shard cannot split yet: it would need every page's passages, or what the whole
    // crawl taught, in one place (docs/scale-out.md).
    const std::array<std::pair<std::string_view, bool>, 3> unsplit = {{
        {"containment.enabled", c.containment.enabled},
        {"features.weighting", c.features.weighting == Weighting::kTfidf},
        {"denoise.site_boilerplate", c.denoise.site_boilerplate},
    }};
    for (const auto& [path, set] : unsplit) {
      if (set) {
        errors.add(mark_of(found, path), path,
                   cat("is not supported by an index split into shards (store.shards = ",
                       c.store.shards, "): leave it at its default"));
      }
    }
  }
  if (c.store.tables != 0) {
    const std::vector<std::uint64_t> counts = allowed_table_counts(c.store.design_k);
    if (std::ranges::find(counts, c.store.tables) == counts.end()) {
      std::string list;
      for (std::uint64_t n : counts) list += cat(list.empty() ? "" : ", ", n);
      errors.add(mark_of(found, "store.tables"), "store.tables",
                 cat("must be 0 (derived from store.expected_documents) or C(k + r, r) for some r "
                     ">= 1 with k = store.design_k = ",
                     c.store.design_k, ", at most ", kMaxTables, " (", list.empty() ? "none" : list,
                     "), got ", c.store.tables));
    }
  }
}

}  // namespace

std::expected<std::string, std::string> resolve_property(const PropertyValue& value) {
  switch (value.source) {
    case PropertyValue::Source::kText:
      return value.text;
    case PropertyValue::Source::kEnv: {
      const char* text = std::getenv(value.text.c_str());
      if (text == nullptr)
        return std::unexpected(cat("environment variable ", value.text, " is not set"));
      return std::string(text);
    }
    case PropertyValue::Source::kFile:
      break;
  }
  const std::size_t max_bytes = YamlLimits{}.max_bytes;
  auto text = read_at_most(value.text, max_bytes);
  if (!text) return std::unexpected(cat("file ", value.text, ": cannot read: ", text.error()));
  if (text->size() > max_bytes) {
    return std::unexpected(cat("file ", value.text, ": more than ", max_bytes,
                               " bytes; a property is at most ", max_bytes));
  }
  std::string contents = std::move(*text);
  if (contents.ends_with("\r\n")) {
    contents.resize(contents.size() - 2);
  } else if (contents.ends_with('\n')) {
    contents.pop_back();
  }
  return contents;
}

std::expected<Config, std::string> parse_config(const std::string& yaml_text) {
  // libyaml checks the text first (config/yaml_gate.h): yaml-cpp sees only well-formed,
  // bounded, alias-free single documents.
  auto shape = check_yaml(yaml_text);
  if (!shape) return std::unexpected(shape.error());
  if (shape->documents > 1) {
    return std::unexpected(cat("line ", shape->second_document_line,
                               ": top level: must be one YAML document, found ",
                               shape->documents));
  }
  try {
    YAML::Node document;
    try {
      document = YAML::Load(yaml_text);
    } catch (const YAML::ParserException& e) {
      return std::unexpected(cat("line ", e.mark.line + 1, ", column ", e.mark.column + 1,
                                 ": YAML syntax error: ", e.msg));
    }
    Errors errors;
    std::map<std::string, Found> found;
    if (shape->documents == 1) collect(document, "", found, errors);

    Config config;
    for_each_key(config, [&](const Key& key, auto& field) {
      auto it = found.find(std::string(key.path));
      if (it != found.end()) read(it->second, key, field, errors);
    });
    // Rules across keys only make sense between valid values.
    if (errors.empty()) check_across_keys(config, found, errors);
    if (!errors.empty()) return std::unexpected(errors.text());
    return config;
  } catch (const YAML::Exception& e) {
    // Not expected from the calls above; reported rather than lost if yaml-cpp disagrees.
    return std::unexpected(cat("YAML error: ", e.what()));
  }
}

std::expected<Config, std::string> load_config_file(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return std::unexpected(cat(path, ": cannot read: is a directory"));
  }
  const std::size_t max_bytes = YamlLimits{}.max_bytes;
  auto text = read_at_most(path, max_bytes);
  if (!text) return std::unexpected(cat(path, ": cannot read: ", text.error()));
  if (text->size() > max_bytes) {
    return std::unexpected(
        cat(path, ": more than ", max_bytes, " bytes; a config is at most ", max_bytes));
  }
  auto config = parse_config(*text);
  if (config) return config;
  std::string message;
  std::istringstream lines(config.error());
  for (std::string line; std::getline(lines, line);) {
    if (!message.empty()) message += '\n';
    message += cat(path, ": ", line);
  }
  return std::unexpected(message);
}

std::vector<std::string> config_warnings(const Config& config) {
  // property, lower-cased weakening value, the risk.
  struct Weak {
    std::string_view name, value, risk;
  };
  static constexpr Weak kWeak[] = {
      {"acks", "0", "outputs are not acknowledged by the broker: lost when it fails"},
      {"acks", "1", "an output acknowledged by one broker is lost when it fails before it is "
                    "replicated, after neardupd committed its input"},
      {"request.required.acks", "0", "outputs are not acknowledged by the broker"},
      {"request.required.acks", "1", "an acknowledged output can be lost with its leader"},
      {"enable.idempotence", "false", "a retried send can publish an output twice in a row"},
      {"isolation.level", "read_uncommitted",
       "pages of aborted transactions in the input are read and tagged"},
      {"auto.offset.reset", "latest", "a new group or an expired offset skips every page "
                                      "already in the input topic"},
      {"auto.offset.reset", "largest", "a new group or an expired offset skips every page "
                                       "already in the input topic"},
      {"auto.offset.reset", "end", "a new group or an expired offset skips every page already "
                                   "in the input topic"},
  };
  std::vector<std::string> warnings;
  for (const auto& [map, path] :
       {std::pair{&config.kafka.properties, "kafka.properties"},
        std::pair{&config.kafka.consumer_properties, "kafka.consumer_properties"},
        std::pair{&config.kafka.producer_properties, "kafka.producer_properties"}}) {
    for (const auto& [name, value] : *map) {
      if (value.source != PropertyValue::Source::kText) continue;
      const std::string lower = ascii_lowercase(value.text);
      for (const Weak& weak : kWeak) {
        if (name == weak.name && lower == weak.value) {
          warnings.push_back(cat(path, ".", name, ": ", value.text, ": ", weak.risk));
        }
      }
    }
  }
  return warnings;
}

}  // namespace neardup
