// The printed side of Config: the canonical text of each value, from which scheme_id hashes,
// restart_only_changes diffs and to_yaml prints, all by the one table of keys (keys.h).
#include <xxhash.h>

#include <string>
#include <type_traits>
#include <vector>

#include "common/secret.h"
#include "config/config.h"
#include "config/keys.h"

namespace neardup {
namespace {

using namespace config_keys;  // NOLINT(google-build-using-namespace): config/'s own table

// --- Canonical text of values (scheme_id, restart_only_changes, to_yaml) -------------------

// YAML double-quoted: \\, \" and control bytes escaped; other bytes as they are.
std::string quote(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += cat("\\x", hex(c, 2));
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + '"';
}

std::string canonical(const std::string& value) { return quote(value); }
std::string canonical(bool value) { return value ? "true" : "false"; }
std::string canonical(std::unsigned_integral auto value) { return std::to_string(value); }
std::string canonical(double value) { return canonical_real(value); }
template <class E>
requires std::is_enum_v<E> std::string canonical(E value) { return quote(enum_name(value)); }
std::string canonical(const PropertyValue& value) {
  switch (value.source) {
    case PropertyValue::Source::kFile:
      return cat("{file: ", quote(value.text), "}");
    case PropertyValue::Source::kEnv:
      return cat("{env: ", quote(value.text), "}");
    case PropertyValue::Source::kText:
      break;
  }
  return quote(value.text);
}
std::string canonical(const PropertyMap& value) {
  std::string out = "{";
  for (const auto& [name, property] : value) {
    if (out.size() > 1) out += ", ";
    out += cat(quote(name), ": ", canonical(property));
  }
  return out + "}";
}

// canonical(), but the text of secret properties is left out: what to_yaml prints.
template <class T>
std::string printable(const T& value) {
  return canonical(value);
}
std::string printable(const PropertyValue& value) {  // kafka.fingerprint_key: a secret
  if (value.source == PropertyValue::Source::kText && !value.text.empty()) {
    return canonical(PropertyValue("<redacted>"));
  }
  return canonical(value);
}
std::string printable(const PropertyMap& value) {
  PropertyMap shown = value;
  for (auto& [name, property] : shown) {
    if (is_secret_property(name) && property.source == PropertyValue::Source::kText) {
      property.text = "<redacted>";
    }
  }
  return canonical(shown);
}

bool changes_fingerprints(std::string_view path) {
  return path.starts_with("decode.") || path.starts_with("denoise.") ||
         path.starts_with("features.") || path.starts_with("fingerprint.") ||
         path.starts_with("minhash.") ||
         // Passages are made by these; whether a page carries them at all changes nothing else.
         (path.starts_with("containment.") && path != "containment.enabled");
}

}  // namespace

using config_keys::enum_name;

std::string_view name_of(DenoiseMode value) { return enum_name(value); }
std::string_view name_of(Weighting value) { return enum_name(value); }
std::string_view name_of(CjkTokens value) { return enum_name(value); }
std::string_view name_of(MainTextOutput value) { return enum_name(value); }
std::string_view name_of(LogLevel value) { return enum_name(value); }
std::string_view name_of(LogFormat value) { return enum_name(value); }

std::string scheme_id(const Config& config) {
  std::string text = "neardup-scheme-v3\n";
  for_each_key(config, [&](const Key& key, const auto& field) {
    if (!changes_fingerprints(key.path)) return;
    std::string value = canonical(field);
    if (value == "0" && !key.scheme_unset.empty()) value = key.scheme_unset;
    if (value != key.scheme_omits) text += cat(key.path, "=", value, "\n");
  });
  const XXH64_hash_t hash = XXH3_64bits(text.data(), text.size());
  return "s-" + hex(hash >> 32, 8);
}

LshDesign requested_lsh(const MinHashConfig& minhash) {
  if (minhash.bands == 0 && minhash.rows == 0) return {};
  return {minhash.bands != 0 ? minhash.bands : kFormerDefaultLsh.bands,
          minhash.rows != 0 ? minhash.rows : kFormerDefaultLsh.rows};
}

LshDesign new_scheme_lsh(const MinHashConfig& minhash) {
  const LshDesign requested = requested_lsh(minhash);
  return requested.bands != 0 ? requested : kDefaultLsh;
}

std::optional<std::string> lsh_conflict(
    const Config& config, const std::function<LshDesign(const std::string& scheme)>& stored_lsh) {
  const LshDesign asked = requested_lsh(config.minhash);
  if (!config.minhash.enabled || asked.bands == 0) return std::nullopt;
  const std::string scheme = scheme_id(config);
  const LshDesign stored = stored_lsh(scheme);
  if (stored.bands == 0 || asked == stored) return std::nullopt;
  return cat("minhash.bands, minhash.rows: the store holds scheme ", scheme, " banded ",
             stored.bands, " x ", stored.rows, ", and the config asks for ", asked.bands, " x ",
             asked.rows,
             " under the same scheme id: leave both unset to go on with the "
             "store's design, or use another store for ",
             asked.bands, " x ", asked.rows);
}

std::vector<std::string> restart_only_changes(const Config& a, const Config& b) {
  const std::vector<Setting> before = config_settings(a);
  const std::vector<Setting> after = config_settings(b);
  std::vector<std::string> changed;
  for (std::size_t i = 0; i < before.size(); ++i) {
    if (is_restart_only(before[i].path) && before[i].value != after[i].value) {
      changed.emplace_back(before[i].path);
    }
  }
  return changed;
}

std::string to_yaml(const Config& config) {
  std::string out = cat("# neardup configuration (scheme ", scheme_id(config), ")\n");
  std::vector<std::string_view> open;  // the sections of the previous key
  for_each_key(config, [&](const Key& key, const auto& field) {
    std::vector<std::string_view> parts;
    for (std::size_t start = 0;;) {
      std::size_t dot = key.path.find('.', start);
      parts.push_back(key.path.substr(start, dot - start));
      if (dot == std::string_view::npos) break;
      start = dot + 1;
    }
    std::size_t depth = 0;
    while (depth < open.size() && depth + 1 < parts.size() && open[depth] == parts[depth]) {
      ++depth;
    }
    open.resize(depth);
    for (; depth + 1 < parts.size(); ++depth) {
      out += cat(std::string(2 * depth, ' '), parts[depth], ":\n");
      open.push_back(parts[depth]);
    }
    std::string value = printable(field);
    if constexpr (std::is_integral_v<std::remove_cvref_t<decltype(field)>> &&
                  !std::is_same_v<std::remove_cvref_t<decltype(field)>, bool>) {
      if (key.size) value = format_size(field);
      if (key.duration) value = format_duration(field);
      if (key.hex) value = "0x" + hex(field, 16);
    }
    out += cat(std::string(2 * depth, ' '), parts.back(), ": ", value, "\n");
  });
  return out;
}

std::vector<Setting> config_settings(const Config& config) {
  std::vector<Setting> out;
  for_each_key(config, [&](const Key& key, const auto& field) {
    out.push_back({std::string(key.path), canonical(field)});
  });
  return out;
}

bool is_restart_only(std::string_view path) {
  return path.starts_with("kafka.") || path.starts_with("store.") || path.starts_with("metrics.") ||
         path == "pipeline.threads";
}

void keep_restart_only(Config& next, const Config& running) {
  // Both walks visit the same keys in the same order: the running value of each restart-only
  // key goes to the same key of `next`.
  std::vector<const void*> values;
  for_each_key(running, [&](const Key&, const auto& field) { values.push_back(&field); });
  std::size_t i = 0;
  for_each_key(next, [&](const Key& key, auto& field) {
    using Field = std::remove_reference_t<decltype(field)>;
    if (is_restart_only(key.path)) field = *static_cast<const Field*>(values[i]);
    ++i;
  });
}

}  // namespace neardup
