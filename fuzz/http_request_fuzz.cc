// An HTTP request (any bytes after the first) sent to a MetricsServer on loopback that serves
// queries: libmicrohttpd's parser, then the listener's routes, body limits and budget, and its
// connection bookkeeping. When the first byte is odd, another connection first takes part of
// the body budget, so that requests are refused for it (503) too. Checks: an answer starts
// with an HTTP/1.x status line; once both connections are closed, the listener holds no
// connection and no byte of the budget (nothing leaks from either).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "fuzz/fuzz_target.h"
#include "ops/metrics_server.h"
#include "ops/testing/raw_socket.h"

namespace {

using neardup::ops::HttpAnswer;
using neardup::ops::MetricsServer;
using neardup::ops::testing::RawSocket;

MetricsServer& server() {
  static MetricsServer* const started = [] {
    static neardup::ops::MetricsRegistry registry;
    neardup::ops::QueryHandlers queries;
    queries.max_body_bytes = 1000;
    queries.body_budget_bytes = 1500;
    queries.lookup = [](std::string body, const std::string&) {
      return HttpAnswer{200, "{\"bytes\":" + std::to_string(body.size()) + "}"};
    };
    queries.page = [](const std::string& id) {
      return HttpAnswer{id.empty() ? 500 : 404, "{}"};  // the route never passes an empty id
    };
    auto server = MetricsServer::start("127.0.0.1:0", registry, {}, {}, std::move(queries));
    if (!server) {
      std::fprintf(stderr, "http_request_fuzz: %s\n", server.error().c_str());
      std::abort();
    }
    return server->release();
  }();
  return *started;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  MetricsServer& listener = server();
  const bool hold_budget = size > 0 && (data[0] & 1) != 0;
  const std::string_view request =
      size > 0 ? std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1) : "";
  {
    std::optional<RawSocket> holder;
    if (hold_budget) {
      holder.emplace(listener.port());
      holder->send(
          "POST /v1/lookup HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n"
          "Expect: 100-continue\r\n\r\n");
      if (!holder->receive_until("\r\n\r\n", 5).starts_with("HTTP/1.1 100")) __builtin_trap();
    }
    RawSocket client(listener.port());
    if (!client.connected()) {
      std::perror("http_request_fuzz: connect");
      __builtin_trap();
    }
    client.send(request);
    // The end of the request apart from its bytes: libmicrohttpd may miss an end that comes
    // with them, and then waits for the request's deadline to close the connection.
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    client.end_sending();
    const std::string answer = client.receive_all(6);
    if (!answer.empty() && !answer.starts_with("HTTP/1.1 ") && !answer.starts_with("HTTP/1.0 ")) {
      __builtin_trap();
    }
  }
  // The server learns of the closes on its own threads.
  for (int i = 0; i < 5000; ++i) {
    const MetricsServer::Load load = listener.load();
    if (load.connections == 0 && load.body_bytes == 0) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  __builtin_trap();  // a connection or body bytes still held 5 s after both connections closed
}
