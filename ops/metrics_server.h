// The metrics HTTP endpoint on `metrics.listen` (docs/operations.md):
//   GET /metrics  the registry in the Prometheus text format (text/plain; version=0.0.4)
//   GET /healthz  liveness: 200 "ok", or 503 with the reason the health check gives
//   GET /readyz   readiness: 200 "ready", or 503 with the reason the readiness check gives
// and, when query handlers are given (metrics.queries):
//   POST /v1/lookup      what a page (the request body) would be tagged: JSON
//   GET /v1/pages/{id}   a stored page and its cluster: JSON, 404 when there is none
//   GET /v1/explain?id=ID[&with=ID]  why a stored page matched another: JSON (400 without id)
// Anything else is 404. Served until stop() by libmicrohttpd: two threads, each polling its
// connections with epoll, so that idle or slow clients never hold a worker. Ranges are not
// served; every response is whole.
//
// The listener is bounded whatever the clients do (ops/connection_table.h has the policy):
//   - Connections: at most kMaxConnections, kMaxConnectionsPerClient from one address. Past
//     either, a new connection closes the longest-waiting connection without a request in
//     progress (of that address, or of the address with the most), so that stalled
//     connections never lock out a prompt request such as a health check; when every
//     connection is busy with a request, the new one is closed. Connections being closed
//     count until they are: at most kMaxConnections + kSpareConnections sockets are open
//     (later ones wait in the kernel's accept queue).
//   - Time: a request's line and headers must arrive within kHeaderSeconds of the connection's
//     start or of its previous request's end, its body within kHeaderSeconds more plus its
//     length at kMinBodyBytesPerSecond; otherwise the connection is closed without an answer.
//     Any connection is also closed after kIdleSeconds without progress.
//   - Memory: a request's line and headers in kHeaderBytes (431 past it); its body in
//     QueryHandlers::max_body_bytes (413, before it is read when its length is declared); the
//     bodies being received on all connections in QueryHandlers::body_budget_bytes, reserved
//     when a request's headers arrive (its Content-Length, or max_body_bytes when the length is
//     only known at the end): a request that does not fit is answered 503 with Retry-After: 1
//     and closed, before its body is read; a body stays in the budget until its request ends.
//     The listener's memory is thus at most (kMaxConnections + kSpareConnections) x
//     kHeaderBytes, plus body_budget_bytes, plus the answers being sent and the work of the
//     handlers running (one at a time per thread).
//
// An empty metrics.listen means no metrics server: do not call start() then.
//
// Usage (daemon start-up, after the registry exists and before READY=1):
//   auto server = MetricsServer::start(config.metrics.listen, registry, health, ready);
//   if (!server) { log(server.error()); exit 2/3; }
//   ... (*server)->port() ...
//   (*server)->stop();  // on shutdown, or let the destructor do it
#pragma once

#include <cstddef>
#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/listen_address.h"
#include "ops/metrics.h"

struct MHD_Daemon;

namespace neardup::ops {

// The listener's bounds (see the top of this file).
inline constexpr unsigned kMaxConnections = 256;
inline constexpr unsigned kMaxConnectionsPerClient = 64;
inline constexpr unsigned kSpareConnections = 64;
inline constexpr unsigned kIdleSeconds = 10;
inline constexpr unsigned kHeaderSeconds = 5;
inline constexpr std::size_t kMinBodyBytesPerSecond = 64 * 1024;
inline constexpr std::size_t kHeaderBytes = 32 * 1024;

// The /healthz or /readyz verdict: a value means healthy (ready); an error is the reason for a
// 503. An empty check always passes.
using HealthCheck = std::function<std::expected<void, std::string>()>;

// An answer of a query handler: the HTTP status and a JSON body.
struct HttpAnswer {
  int status = 200;
  std::string json;
};

// The index's questions (docs/operations.md#questions-over-http). Handlers run on the server's
// worker threads. Unset: the routes are not served (404).
struct QueryHandlers {
  // POST /v1/lookup: the request body (given away: the handler holds the only copy) and its
  // Content-Type header.
  std::function<HttpAnswer(std::string body, const std::string& content_type)> lookup;
  // GET /v1/pages/{id}: the id, percent-decoded.
  std::function<HttpAnswer(const std::string& id)> page;
  // GET /v1/explain?id=ID[&with=ID]: the two ids, percent-decoded (`with` empty when absent).
  // A request without `id` is answered 400 here.
  std::function<HttpAnswer(const std::string& id, const std::string& with)> explain;
  // Larger request bodies are refused (413) before they are read whole.
  std::size_t max_body_bytes = 10u << 20;
  // The bodies being received on all connections together (see the top of this file); at
  // least max_body_bytes.
  std::size_t body_budget_bytes = 20u << 20;
};

class MetricsServer {
 public:
  // Binds `listen` and starts serving `registry` (which must outlive the server). Returns the
  // error (bad address, name resolution or bind failure with the system's reason, e.g.
  // "Address already in use"; a body budget below the body limit) without starting anything.
  // A listening port is never shared: a second daemon on the same port fails here instead of
  // splitting the scrapes.
  static std::expected<std::unique_ptr<MetricsServer>, std::string> start(
      std::string_view listen, const MetricsRegistry& registry, HealthCheck health = {},
      HealthCheck ready = {}, QueryHandlers queries = {});

  ~MetricsServer();  // stop()s
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The bound address; port() is the real port, also when 0 was asked for.
  const std::string& host() const { return address_.host; }
  int port() const { return address_.port; }

  // Closes the listening socket and every connection, finishes the handlers running and joins
  // the threads. Idempotent.
  void stop();

  // What the listener holds now: its open connections (those being closed included) and the
  // bytes of request bodies reserved in the budget.
  struct Load {
    std::size_t connections = 0;
    std::size_t body_bytes = 0;
  };
  Load load() const;

  struct Routes;  // what the threads serve (metrics_server.cc)

 private:
  MetricsServer(ListenAddress address, std::unique_ptr<Routes> routes);

  ListenAddress address_;
  std::unique_ptr<Routes> routes_;
  MHD_Daemon* daemon_ = nullptr;
};

}  // namespace neardup::ops
