#include "ops/metrics_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "ops/testing/raw_socket.h"

namespace neardup::ops {
namespace {

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

using testing::RawSocket;

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
  auto none_explain = plain_client.Get("/v1/explain?id=a-1");
  ASSERT_TRUE(none_explain);
  EXPECT_EQ(none_explain->status, 404);

  QueryHandlers queries;
  queries.max_body_bytes = 100;
  queries.lookup = [](const std::string& body, const std::string& content_type) {
    return HttpAnswer{200, "{\"body\":\"" + body + "\",\"type\":\"" + content_type + "\"}"};
  };
  queries.page = [](const std::string& id) {
    return id == "a b/1" ? HttpAnswer{200, "{\"id\":\"a b/1\"}"} : HttpAnswer{404, "{}"};
  };
  queries.explain = [](const std::string& id, const std::string& with) {
    return HttpAnswer{200, "{\"a\":\"" + id + "\",\"b\":\"" + with + "\"}"};
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
  auto explained = client.Get("/v1/explain?id=a%20b%2F1&with=c");  // arguments percent-decoded
  ASSERT_TRUE(explained);
  EXPECT_EQ(explained->status, 200);
  EXPECT_EQ(explained->body, "{\"a\":\"a b/1\",\"b\":\"c\"}\n");
  auto alone = client.Get("/v1/explain?id=x");
  ASSERT_TRUE(alone);
  EXPECT_EQ(alone->body, "{\"a\":\"x\",\"b\":\"\"}\n");
  auto no_id = client.Get("/v1/explain?with=c");
  ASSERT_TRUE(no_id);
  EXPECT_EQ(no_id->status, 400);
  auto big = client.Post("/v1/lookup", std::string(1000, 'x'), "text/html");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
}

// The listener once gave each connection a worker until its 5 s read timeout: 100 idle sockets
// delayed /healthz by 250 s.
TEST(MetricsServer, ScrapesAreAnsweredPromptlyWith200IdleConnectionsOpen) {
  MetricsRegistry registry;
  registry.counter("idle_test_total", "help").labels({}).inc(3);
  auto server = MetricsServer::start("127.0.0.1:0", registry);
  ASSERT_TRUE(server) << server.error();
  std::vector<std::unique_ptr<RawSocket>> idle;
  for (int i = 0; i < 200; ++i) {
    idle.push_back(std::make_unique<RawSocket>((*server)->port()));
    ASSERT_TRUE(idle.back()->connected());
    if (i % 2 == 1) idle.back()->send("GET /metr");  // a request that never ends
  }
  httplib::Client client("127.0.0.1", (*server)->port());
  client.set_read_timeout(5, 0);
  for (int i = 0; i < 5; ++i) {
    auto start = std::chrono::steady_clock::now();
    auto res = client.Get("/metrics");
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(res) << httplib::to_string(res.error());
    EXPECT_EQ(res->status, 200);
    EXPECT_NE(res->body.find("idle_test_total 3"), std::string::npos);
    EXPECT_LT(seconds, 1.0);
    auto health = client.Get("/healthz");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->status, 200);
  }
}

// 2M headers once cost 270 MB; headers past kHeaderBytes are refused.
TEST(MetricsServer, HeadersPastTheLimitAreRefusedAndServingGoesOn) {
  MetricsRegistry registry;
  auto server = MetricsServer::start("127.0.0.1:0", registry);
  ASSERT_TRUE(server) << server.error();
  {
    RawSocket flood((*server)->port());
    ASSERT_TRUE(flood.connected());
    std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
    for (int i = 0; i < 100000; ++i) request += "X-" + std::to_string(i) + ": y\r\n";
    request += "\r\n";
    flood.send(request);
    std::string response = flood.receive_all();
    EXPECT_EQ(response.find("HTTP/1.1 200"), std::string::npos) << response.substr(0, 100);
    if (!response.empty()) {
      EXPECT_TRUE(response.starts_with("HTTP/1.1 431")) << response.substr(0, 100);
    }
  }
  httplib::Client client("127.0.0.1", (*server)->port());
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

// A multi-range request once turned a 6 KB body into 19 MB; ranges are not served.
TEST(MetricsServer, RangeRequestsGetTheWholeBodyOnce) {
  MetricsRegistry registry;
  registry.counter("range_test_total", "help").labels({}).inc();
  auto server = MetricsServer::start("127.0.0.1:0", registry);
  ASSERT_TRUE(server) << server.error();
  httplib::Client client("127.0.0.1", (*server)->port());
  auto plain = client.Get("/metrics");
  ASSERT_TRUE(plain);
  std::string ranges = "bytes=0-";
  for (int i = 0; i < 1000; ++i) ranges += ",0-";
  auto ranged = client.Get("/metrics", {{"Range", ranges}});
  ASSERT_TRUE(ranged);
  EXPECT_EQ(ranged->status, 200);
  EXPECT_EQ(ranged->body.size(), plain->body.size());
  EXPECT_TRUE(ranged->body == plain->body);
}

// A chunked body without Content-Length is counted as it arrives and refused past the limit.
TEST(MetricsServer, ChunkedBodyPastTheLimitIsRefused) {
  MetricsRegistry registry;
  QueryHandlers queries;
  queries.max_body_bytes = 100;
  queries.lookup = [](const std::string&, const std::string&) { return HttpAnswer{200, "{}"}; };
  auto server = MetricsServer::start("127.0.0.1:0", registry, {}, {}, queries);
  ASSERT_TRUE(server) << server.error();
  RawSocket socket((*server)->port());
  ASSERT_TRUE(socket.connected());
  std::string request =
      "POST /v1/lookup HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
      "Connection: close\r\n\r\n";
  for (int i = 0; i < 20; ++i) request += "10\r\n" + std::string(16, 'x') + "\r\n";
  request += "0\r\n\r\n";
  socket.send(request);
  std::string response = socket.receive_all();
  EXPECT_TRUE(response.starts_with("HTTP/1.1 413")) << response.substr(0, 200);
}

std::string lookup_head(std::string_view framing) {
  return "POST /v1/lookup HTTP/1.1\r\nHost: x\r\nContent-Type: text/html\r\n"
         "Expect: 100-continue\r\n" +
         std::string(framing) + "\r\n\r\n";
}

std::string content_length(std::size_t bytes) {
  return "Content-Length: " + std::to_string(bytes);
}

// Bodies were once held whole as they arrived, up to the per-request limit on every
// connection: 20 uploads of 60 MiB took the daemon from 21 MB to 1.41 GB, 48 ended it with
// std::bad_alloc. Bodies being received now share one budget; a request whose body would take
// the listener past it is answered 503 at once, before any of its body is read.
TEST(MetricsServer, BodiesPastTheListenersBudgetAreRefusedBeforeTheyAreRead) {
  MetricsRegistry registry;
  QueryHandlers queries;
  queries.max_body_bytes = 1 << 20;
  queries.body_budget_bytes = 2 << 20;
  queries.lookup = [](const std::string& body, const std::string&) {
    return HttpAnswer{200, "{\"bytes\":" + std::to_string(body.size()) + "}"};
  };
  auto server = MetricsServer::start("127.0.0.1:0", registry, {}, {}, queries);
  ASSERT_TRUE(server) << server.error();
  const int port = (*server)->port();

  // Two uploads of the largest size take the whole budget ("100 Continue": admitted).
  RawSocket first(port), second(port);
  for (RawSocket* upload : {&first, &second}) {
    ASSERT_TRUE(upload->connected());
    upload->send(lookup_head(content_length(1 << 20)));
    EXPECT_TRUE(upload->receive_until("\r\n\r\n", 5).starts_with("HTTP/1.1 100"));
    upload->send(std::string(1000, 'x'));
  }
  // A third is refused at once, and so is a chunked one (it may grow to the limit).
  for (const std::string& framing :
       {content_length(1 << 20), content_length(1000), std::string("Transfer-Encoding: chunked")}) {
    RawSocket refused(port);
    ASSERT_TRUE(refused.connected());
    const auto start = std::chrono::steady_clock::now();
    refused.send(lookup_head(framing));
    std::string response = refused.receive_all(5);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_TRUE(response.starts_with("HTTP/1.1 503")) << framing << ": " << response.substr(0, 80);
    EXPECT_NE(response.find("Retry-After: 1\r\n"), std::string::npos) << response;
    EXPECT_LT(seconds, 2.0) << "the refusal did not close the connection";
  }
  EXPECT_EQ((*server)->load().body_bytes, 2u << 20);
  // An upload that ends gives its share back (once its answer is sent).
  first.send(std::string((1 << 20) - 1000, 'x'));
  EXPECT_NE(first.receive_until("}\n", 5).find("{\"bytes\":1048576}"), std::string::npos);
  for (int i = 0; i < 100 && (*server)->load().body_bytes > (1u << 20); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ((*server)->load().body_bytes, 1u << 20);
  RawSocket third(port);
  third.send(lookup_head(content_length(1 << 20)));
  EXPECT_TRUE(third.receive_until("\r\n\r\n", 5).starts_with("HTTP/1.1 100"));
  third.send(std::string(1 << 20, 'x'));
  EXPECT_NE(third.receive_until("}\n", 5).find("{\"bytes\":1048576}"), std::string::npos);
}

TEST(MetricsServer, ABodyBudgetSmallerThanOneBodyIsAnError) {
  MetricsRegistry registry;
  QueryHandlers queries;
  queries.lookup = [](const std::string&, const std::string&) { return HttpAnswer{200, "{}"}; };
  queries.max_body_bytes = 1000;
  queries.body_budget_bytes = 999;
  auto server = MetricsServer::start("127.0.0.1:0", registry, {}, {}, queries);
  ASSERT_FALSE(server);
  EXPECT_EQ(server.error(),
            "metrics.queries: a body budget of 999 bytes cannot hold one body of the largest "
            "size, 1000 bytes");
}

// 260 connections sending a header byte every 3 s once kept /healthz and /metrics from being
// answered: the idle timeout restarts with every byte. A request's line and headers must now
// arrive within kHeaderSeconds, and its body at a rate that ends it in time; a kept-alive
// connection's deadline runs from the end of its previous request.
TEST(MetricsServer, RequestsThatTrickleAreClosedAtTheirDeadline) {
  MetricsRegistry registry;
  QueryHandlers queries;
  queries.lookup = [](const std::string&, const std::string&) { return HttpAnswer{200, "{}"}; };
  auto server = MetricsServer::start("127.0.0.1:0", registry, {}, {}, queries);
  ASSERT_TRUE(server) << server.error();
  RawSocket head((*server)->port()), body((*server)->port()), kept((*server)->port());
  ASSERT_TRUE(head.connected() && body.connected() && kept.connected());
  body.send("POST /v1/lookup HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n");
  const auto start = std::chrono::steady_clock::now();
  const std::string slow_head =
      "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(100, 'y');
  double head_closed = 0, body_closed = 0;
  int kept_answers = 0;
  for (std::size_t i = 0; i < slow_head.size() && (head_closed == 0 || body_closed == 0); ++i) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds > kHeaderSeconds + 3) break;
    if (head_closed == 0 && head.closed_by_server()) head_closed = seconds;
    if (body_closed == 0 && body.closed_by_server()) body_closed = seconds;
    head.send(slow_head.substr(i, 1));
    body.send("x");
    if (i % 4 == 0) {  // a prompt request every second
      kept.send("POST /v1/lookup HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}");
      kept_answers += kept.receive_until("}\n", 2).starts_with("HTTP/1.1 200");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  EXPECT_GT(head_closed, kHeaderSeconds - 1.0) << "a trickling request line closed too early";
  EXPECT_LT(head_closed, kHeaderSeconds + 1.5) << "a trickling request line was not closed";
  EXPECT_GT(body_closed, kHeaderSeconds - 1.0) << "a trickling body closed too early";
  EXPECT_LT(body_closed, kHeaderSeconds + 1.5) << "a trickling body was not closed";
  EXPECT_GE(kept_answers, static_cast<int>(kHeaderSeconds)) << "a kept-alive connection was cut";
  EXPECT_FALSE(kept.closed_by_server());
}

// One client (one address) holds at most kMaxConnectionsPerClient connections: past them its
// longest-waiting connection without a request is closed, so a client's stalled connections
// never lock out its own, or anyone else's, next request.
TEST(MetricsServer, OneClientKeepsAtMostItsShareOfConnections) {
  MetricsRegistry registry;
  auto server = MetricsServer::start("127.0.0.1:0", registry);
  ASSERT_TRUE(server) << server.error();
  // Waits until `done` holds (the server registers a connection on its own thread: one at a
  // time, so that "longest-waiting" is the order of connecting).
  auto wait_until = [](auto done) {
    for (int i = 0; i < 2000 && !done(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return done();
  };
  std::vector<std::unique_ptr<RawSocket>> other, flood;
  for (std::size_t i = 0; i < 8; ++i) {
    other.push_back(std::make_unique<RawSocket>((*server)->port(), "127.0.0.2"));
    ASSERT_TRUE(other.back()->connected());
    ASSERT_TRUE(wait_until([&] { return (*server)->load().connections == i + 1; }));
  }
  for (std::size_t i = 0; i < kMaxConnectionsPerClient + 40; ++i) {
    flood.push_back(std::make_unique<RawSocket>((*server)->port()));
    ASSERT_TRUE(flood.back()->connected());
    if (i < kMaxConnectionsPerClient) {
      ASSERT_TRUE(wait_until([&] { return (*server)->load().connections == 8 + i + 1; }));
    } else {  // the new one closes the one that has waited longest
      RawSocket& victim = *flood[i - kMaxConnectionsPerClient];
      ASSERT_TRUE(wait_until([&] { return victim.closed_by_server(); })) << "connection " << i;
    }
  }
  EXPECT_EQ(std::count_if(flood.begin(), flood.end(),
                          [](const auto& socket) { return !socket->closed_by_server(); }),
            kMaxConnectionsPerClient);
  for (const auto& socket : other) EXPECT_FALSE(socket->closed_by_server());
}

// 400 stalled connections from one address, more than the listener ever holds: /healthz is
// still answered within a second, for that address as for any other.
TEST(MetricsServer, HealthIsAnsweredWhile400StalledConnectionsAreOpen) {
  MetricsRegistry registry;
  auto server = MetricsServer::start("127.0.0.1:0", registry);
  ASSERT_TRUE(server) << server.error();
  std::vector<std::unique_ptr<RawSocket>> stalled;
  static_assert(400 > kMaxConnections + kSpareConnections);
  for (int i = 0; i < 400; ++i) {
    stalled.push_back(std::make_unique<RawSocket>((*server)->port()));
    ASSERT_TRUE(stalled.back()->connected());
    stalled.back()->send("GET /metr");
  }
  for (const char* source : {"127.0.0.1", "127.0.0.3"}) {
    RawSocket probe((*server)->port(), source);
    ASSERT_TRUE(probe.connected()) << source;
    const auto start = std::chrono::steady_clock::now();
    probe.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    std::string response = probe.receive_all(3);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_TRUE(response.starts_with("HTTP/1.1 200")) << source << ": " << response;
    EXPECT_LT(seconds, 1.0) << source;
  }
}

}  // namespace
}  // namespace neardup::ops
