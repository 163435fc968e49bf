// A TCP listen address as the config writes it (metrics.listen): "host:port" or "[ipv6]:port".
// One grammar for the config's validation and the listener (ops/metrics_server.h). The host is a
// name or IPv4 address (letters, digits, '.', '-', '_'), or an IPv6 address in brackets; port 0
// asks the kernel for a free port (the listener logs the one it got: for tests and ad-hoc runs).
#pragma once

#include <expected>
#include <string>
#include <string_view>

namespace neardup {

struct ListenAddress {
  std::string host;  // as given, without the brackets of an IPv6 literal
  int port = 0;      // 0..65535
};

// The address, or why `text` is not one, starting with `key`: "metrics.listen: port must be
// 0..65535, got \"x:70000\" (want host:port or [ipv6]:port)".
std::expected<ListenAddress, std::string> parse_listen_address(std::string_view text,
                                                               std::string_view key);

}  // namespace neardup
