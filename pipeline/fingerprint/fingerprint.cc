#include "pipeline/fingerprint/fingerprint.h"

#include <array>
#include <bit>
#include <charconv>

namespace neardup {

// Charikar's SimHash: a weighted vote per bit over the feature hashes. Branch-free: the vote
// against a bit is the weight with its sign bit flipped (exactly -weight), so the sums, and the
// fingerprints, are those of the plain `bit ? w : -w` loop, added in the same order; the
// compiler vectorises the inner loop.
std::uint64_t simhash(std::span<const Feature> features) {
  std::array<double, 64> votes{};
  for (const Feature& f : features) {
    const std::uint64_t weight = std::bit_cast<std::uint64_t>(f.weight);
    const std::uint64_t against = ~f.hash;
    for (int bit = 0; bit < 64; ++bit) {
      votes[bit] += std::bit_cast<double>(weight ^ (((against >> bit) & 1) << 63));
    }
  }
  std::uint64_t fingerprint = 0;
  for (int bit = 0; bit < 64; ++bit) {
    if (votes[bit] > 0) fingerprint |= std::uint64_t{1} << bit;
  }
  return fingerprint;
}

std::string fingerprint_hex(std::uint64_t fingerprint) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex(16, '0');
  for (int i = 15; i >= 0; --i, fingerprint >>= 4) hex[i] = kDigits[fingerprint & 0xF];
  return hex;
}

std::optional<std::uint64_t> parse_fingerprint_hex(std::string_view hex) {
  if (hex.size() != 16) return std::nullopt;
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), value, 16);
  if (ec != std::errc() || end != hex.data() + hex.size()) return std::nullopt;
  return value;
}

}  // namespace neardup
