// How far apart two words are, for "did you mean" suggestions (common/help.h for command
// lines, config/key_names.h for configuration keys).
#pragma once

#include <cstddef>
#include <string_view>

namespace neardup {

// Restricted Damerau–Levenshtein distance (insertions, deletions, substitutions and swaps of
// two neighbours each cost 1): "verison" is 1 from "version".
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace neardup
