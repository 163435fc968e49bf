#include "ops/metrics_server.h"

// cpp-httplib: a small HTTP server/client packaged by Debian (libcpp-httplib-dev, shared
// library libcpp-httplib0.11), enough for two GET endpoints without writing socket code.
#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace neardup::ops {

std::expected<ListenAddress, std::string> parse_listen_address(std::string_view listen) {
  auto bad = [&](std::string_view why) {
    return std::unexpected("metrics.listen: " + std::string(why) + ", got \"" +
                           std::string(listen) + "\" (want host:port or [ipv6]:port)");
  };
  ListenAddress address;
  std::string_view port_text;
  if (listen.starts_with('[')) {
    auto close = listen.find(']');
    if (close == std::string_view::npos) return bad("unterminated [ipv6] address");
    address.host = std::string(listen.substr(1, close - 1));
    if (close + 1 >= listen.size() || listen[close + 1] != ':') return bad("missing :port");
    port_text = listen.substr(close + 2);
  } else {
    auto colon = listen.rfind(':');
    if (colon == std::string_view::npos) return bad("missing :port");
    address.host = std::string(listen.substr(0, colon));
    if (address.host.find(':') != std::string::npos) return bad("IPv6 addresses need brackets");
    port_text = listen.substr(colon + 1);
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

MetricsServer::MetricsServer(ListenAddress address, std::unique_ptr<httplib::Server> server)
    : address_(std::move(address)), server_(std::move(server)) {}

MetricsServer::~MetricsServer() { stop(); }

std::expected<std::unique_ptr<MetricsServer>, std::string> MetricsServer::start(
    std::string_view listen, const MetricsRegistry& registry, HealthCheck health,
    HealthCheck ready, QueryHandlers queries) {
  auto address = parse_listen_address(listen);
  if (!address) return std::unexpected(address.error());

  auto server = std::make_unique<httplib::Server>();
  // Scrapes are rare and small: two workers, not httplib's default of one per core.
  server->new_task_queue = [] { return new httplib::ThreadPool(2); };
  // SO_REUSEADDR only (restart over TIME_WAIT); httplib's default adds SO_REUSEPORT, which
  // would let a second daemon bind the same port silently.
  server->set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server->Get("/metrics", [&registry](const httplib::Request&, httplib::Response& res) {
    res.set_content(registry.render(), std::string(kExpositionContentType));
  });
  auto answer = [](const HealthCheck& check, std::string_view good) {
    return [check, good](const httplib::Request&, httplib::Response& res) {
      auto verdict = check ? check() : std::expected<void, std::string>{};
      if (verdict) {
        res.set_content(std::string(good) + "\n", "text/plain; charset=utf-8");
      } else {
        res.status = 503;
        res.set_content(verdict.error() + "\n", "text/plain; charset=utf-8");
      }
    };
  };
  server->Get("/healthz", answer(health, "ok"));
  server->Get("/readyz", answer(ready, "ready"));
  auto reply = [](httplib::Response& res, const HttpAnswer& answer) {
    res.status = answer.status;
    res.set_content(answer.json + "\n", "application/json");
  };
  if (queries.lookup) {
    server->set_payload_max_length(queries.max_body_bytes);
    server->Post("/v1/lookup", [lookup = queries.lookup, reply](const httplib::Request& req,
                                                                 httplib::Response& res) {
      reply(res, lookup(req.body, req.get_header_value("Content-Type")));
    });
  }
  if (queries.page) {
    server->Get(R"(/v1/pages/(.+))", [page = queries.page, reply](const httplib::Request& req,
                                                                   httplib::Response& res) {
      reply(res, page(req.matches[1].str()));
    });
  }

  // httplib reports a failed bind as false/-1 only; the reason is left in errno.
  errno = 0;
  int port = address->port == 0
                 ? server->bind_to_any_port(address->host)
                 : (server->bind_to_port(address->host, address->port) ? address->port : -1);
  if (port < 0) {
    int err = errno;
    return std::unexpected("metrics.listen: cannot listen on " + std::string(listen) + ": " +
                           (err ? std::strerror(err) : "cannot resolve or bind the address"));
  }
  address->port = port;

  std::unique_ptr<MetricsServer> result(new MetricsServer(*address, std::move(server)));
  httplib::Server* raw = result->server_.get();
  auto finished = std::make_shared<std::atomic<bool>>(false);
  result->thread_ = std::thread([raw, finished] {
    raw->listen_after_bind();
    finished->store(true);
  });
  // httplib's stop() only acts once the accept loop runs: wait for it, so that a stop()
  // right after start() cannot be lost.
  while (!raw->is_running() && !finished->load()) std::this_thread::yield();
  if (finished->load()) {
    result->thread_.join();
    return std::unexpected("metrics.listen: the server on " + std::string(listen) +
                           " stopped right after it started");
  }
  return result;
}

void MetricsServer::stop() {
  if (!thread_.joinable()) return;
  server_->stop();
  thread_.join();
}

}  // namespace neardup::ops
