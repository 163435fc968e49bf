// PLACEHOLDER: replaced by the real main-text extractor.
#include "pipeline/denoise/denoise.h"

namespace neardup {
MainText denoise(std::string_view html, std::string_view, const DenoiseConfig&) {
  MainText m;
  m.paragraphs.emplace_back(html);
  return m;
}
std::string joined_text(const MainText& main_text) {
  std::string out;
  for (const auto& p : main_text.paragraphs) {
    if (!out.empty()) out += '\n';
    out += p;
  }
  return out;
}
}  // namespace neardup
