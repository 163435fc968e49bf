#include <atomic>
#include "ops/metrics_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <string>

namespace neardup::ops {
namespace {

TEST(ParseListenAddress, AcceptsHostPortAndBracketedIpv6) {
  auto v4 = parse_listen_address("127.0.0.1:9464");
  ASSERT_TRUE(v4) << v4.error();
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 9464);
  auto v6 = parse_listen_address("[::1]:0");
  ASSERT_TRUE(v6) << v6.error();
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
  auto name = parse_listen_address("localhost:80");
  ASSERT_TRUE(name);
  EXPECT_EQ(name->host, "localhost");
}

TEST(ParseListenAddress, RejectsMalformedAddressesNamingTheKey) {
  for (const char* bad : {"", "9464", ":9464", "127.0.0.1:", "127.0.0.1:70000", "host:12x",
                          "::1:9464", "[::1]9464", "[::1"}) {
    auto parsed = parse_listen_address(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_TRUE(parsed.error().starts_with("metrics.listen: ")) << parsed.error();
  }
}

TEST(MetricsServer, ServesMetricsAndHealthOverHttp) {
  MetricsRegistry registry;
  DaemonMetrics metrics(registry);
  auto server = MetricsServer::start("127.0.0.1:0", registry);
  ASSERT_TRUE(server) << server.error();
  ASSERT_GT((*server)->port(), 0);

  metrics.pages_in.inc(41);
  metrics.pages_in.inc();
  metrics.pages_unique.inc(5);

  httplib::Client client("127.0.0.1", (*server)->port());
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(res->body.find("\nneardup_pages_in_total 42\n"), std::string::npos) << res->body;
  EXPECT_NE(res->body.find("neardup_pages_out_total{status=\"unique\"} 5\n"), std::string::npos);

  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok\n");

  auto missing = client.Get("/nothing");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);

  (*server)->stop();
  (*server)->stop();  // idempotent
  httplib::Client after("127.0.0.1", (*server)->port());
  EXPECT_FALSE(after.Get("/metrics"));
}

TEST(MetricsServer, UnhealthyCheckAnswers503WithTheReason) {
  MetricsRegistry registry;
  auto server = MetricsServer::start("127.0.0.1:0", registry, [] {
    return std::expected<void, std::string>(std::unexpected("kafka: all brokers down"));
  });
  ASSERT_TRUE(server) << server.error();
  httplib::Client client("127.0.0.1", (*server)->port());
  auto res = client.Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(res->body, "kafka: all brokers down\n");
}

TEST(MetricsServer, ReadinessIsSeparateFromLiveness) {
  MetricsRegistry registry;
  std::atomic<bool> ready{false};
  auto server = MetricsServer::start(
      "127.0.0.1:0", registry, [] { return std::expected<void, std::string>{}; },
      [&ready]() -> std::expected<void, std::string> {
        if (!ready.load()) return std::unexpected("no Kafka broker is reachable");
        return {};
      });
  ASSERT_TRUE(server) << server.error();
  httplib::Client client("127.0.0.1", (*server)->port());
  auto alive = client.Get("/healthz");
  auto not_ready = client.Get("/readyz");
  ASSERT_TRUE(alive && not_ready);
  EXPECT_EQ(alive->status, 200);
  EXPECT_EQ(not_ready->status, 503);
  EXPECT_EQ(not_ready->body, "no Kafka broker is reachable\n");
  ready = true;
  auto now_ready = client.Get("/readyz");
  ASSERT_TRUE(now_ready);
  EXPECT_EQ(now_ready->status, 200);
  EXPECT_EQ(now_ready->body, "ready\n");
}

TEST(MetricsServer, PortInUseIsAClearError) {
  MetricsRegistry registry;
  auto first = MetricsServer::start("127.0.0.1:0", registry);
  ASSERT_TRUE(first) << first.error();
  std::string taken = "127.0.0.1:" + std::to_string((*first)->port());
  auto second = MetricsServer::start(taken, registry);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error(),
            "metrics.listen: cannot listen on " + taken + ": Address already in use");
}

TEST(MetricsServer, BadAddressIsAnErrorNotACrash) {
  MetricsRegistry registry;
  auto parse_error = MetricsServer::start("nonsense", registry);
  ASSERT_FALSE(parse_error);
  EXPECT_TRUE(parse_error.error().starts_with("metrics.listen: missing :port"));
  // Not an address of this machine: bind fails.
  auto bind_error = MetricsServer::start("192.0.2.1:0", registry);
  ASSERT_FALSE(bind_error);
  EXPECT_TRUE(bind_error.error().starts_with("metrics.listen: cannot listen on 192.0.2.1:0: "))
      << bind_error.error();
}

TEST(MetricsServer, ListensOnIpv6Loopback) {
  MetricsRegistry registry;
  auto server = MetricsServer::start("[::1]:0", registry);
  if (!server) GTEST_SKIP() << "no IPv6 loopback here: " << server.error();
  httplib::Client client("::1", (*server)->port());
  auto res = client.Get("/healthz");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
}

TEST(MetricsServer, StopRightAfterStartReturns) {
  MetricsRegistry registry;
  for (int i = 0; i < 20; ++i) {
    auto server = MetricsServer::start("127.0.0.1:0", registry);
    ASSERT_TRUE(server) << server.error();
  }  // destructors stop; the test hangs if a stop is lost
}

}  // namespace
}  // namespace neardup::ops

namespace neardup::ops {
namespace {

TEST(MetricsServer, QueryRoutesAreServedOnlyWhenGivenHandlers) {
  MetricsRegistry registry;
  auto plain = MetricsServer::start("127.0.0.1:0", registry);
  ASSERT_TRUE(plain) << plain.error();
  httplib::Client plain_client("127.0.0.1", (*plain)->port());
  auto none = plain_client.Get("/v1/pages/a-1");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 404);
  auto none_post = plain_client.Post("/v1/lookup", "<p>x</p>", "text/html");
  ASSERT_TRUE(none_post);
  EXPECT_EQ(none_post->status, 404);

  QueryHandlers queries;
  queries.max_body_bytes = 100;
  queries.lookup = [](const std::string& body, const std::string& content_type) {
    return HttpAnswer{200, "{\"body\":\"" + body + "\",\"type\":\"" + content_type + "\"}"};
  };
  queries.page = [](const std::string& id) {
    return id == "a b/1" ? HttpAnswer{200, "{\"id\":\"a b/1\"}"} : HttpAnswer{404, "{}"};
  };
  auto server = MetricsServer::start("127.0.0.1:0", registry, {}, {}, queries);
  ASSERT_TRUE(server) << server.error();
  httplib::Client client("127.0.0.1", (*server)->port());
  auto looked = client.Post("/v1/lookup", "<p>x</p>", "text/html; charset=utf-8");
  ASSERT_TRUE(looked);
  EXPECT_EQ(looked->status, 200);
  EXPECT_EQ(looked->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(looked->body, "{\"body\":\"<p>x</p>\",\"type\":\"text/html; charset=utf-8\"}\n");
  auto page = client.Get("/v1/pages/a%20b%2F1");  // ids are percent-decoded
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->body, "{\"id\":\"a b/1\"}\n");
  auto missing = client.Get("/v1/pages/zzz");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  auto big = client.Post("/v1/lookup", std::string(1000, 'x'), "text/html");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
}

}  // namespace
}  // namespace neardup::ops
