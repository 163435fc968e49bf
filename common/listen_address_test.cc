#include "common/listen_address.h"

#include <gtest/gtest.h>

namespace neardup {
namespace {

TEST(ListenAddress, AcceptsHostPortBracketedIpv6AndPortZero) {
  auto v4 = parse_listen_address("127.0.0.1:9464", "metrics.listen");
  ASSERT_TRUE(v4) << v4.error();
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 9464);
  auto v6 = parse_listen_address("[::1]:0", "metrics.listen");
  ASSERT_TRUE(v6) << v6.error();
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
  auto name = parse_listen_address("localhost:80", "metrics.listen");
  ASSERT_TRUE(name);
  EXPECT_EQ(name->host, "localhost");
  EXPECT_TRUE(parse_listen_address("[fe80::1%eth0]:9464", "metrics.listen"));
}

TEST(ListenAddress, RejectsMalformedAddressesNamingTheKey) {
  for (const char* bad : {"", "9464", ":9464", "127.0.0.1:", "127.0.0.1:70000", "host:12x",
                          "::1:9464", "[::1]9464", "[::1", "a b:80", "[::1;]:80", "h:-1"}) {
    auto parsed = parse_listen_address(bad, "metrics.listen");
    ASSERT_FALSE(parsed) << bad;
    EXPECT_TRUE(parsed.error().starts_with("metrics.listen: ")) << parsed.error();
  }
}

}  // namespace
}  // namespace neardup
