#include "common/listen_address.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace neardup {

std::expected<ListenAddress, std::string> parse_listen_address(std::string_view text,
                                                               std::string_view key) {
  auto bad = [&](std::string_view why) {
    return std::unexpected(std::string(key) + ": " + std::string(why) + ", got \"" +
                           std::string(text) + "\" (want host:port or [ipv6]:port)");
  };
  ListenAddress address;
  std::string_view port_text;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return bad("unterminated [ipv6] address");
    address.host = std::string(text.substr(1, close - 1));
    if (close + 1 >= text.size() || text[close + 1] != ':') return bad("missing :port");
    port_text = text.substr(close + 2);
    if (!std::ranges::all_of(address.host, [](unsigned char c) {
          return std::isalnum(c) || c == ':' || c == '.' || c == '%';
        })) {
      return bad("not an IPv6 address in the brackets");
    }
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return bad("missing :port");
    address.host = std::string(text.substr(0, colon));
    if (address.host.find(':') != std::string::npos) return bad("IPv6 addresses need brackets");
    port_text = text.substr(colon + 1);
    if (!std::ranges::all_of(address.host, [](unsigned char c) {
          return std::isalnum(c) || c == '.' || c == '-' || c == '_';
        })) {
      return bad("the host must be a name or an address");
    }
  }
  if (address.host.empty()) return bad("missing host");
  auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), address.port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
      address.port < 0 || address.port > 65535) {
    return bad("port must be 0..65535");
  }
  return address;
}

}  // namespace neardup
