// A config file's text through the loader: a config or an error naming what is wrong, fast,
// whatever the YAML looks like (the libyaml gate rejects pathological structure first).
#include <string>

#include "config/config.h"
#include "fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto config = neardup::parse_config(text);
  if (config) {
    (void)neardup::to_yaml(*config);  // what loads also renders (--check-config)
  } else if (config.error().empty()) {
    __builtin_trap();  // an error says what is wrong
  }
  return 0;
}
