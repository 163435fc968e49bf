#include "ops/metrics_server.h"

// libmicrohttpd (Debian: libmicrohttpd-dev, shared library libmicrohttpd12): an HTTP server
// that polls its connections, so that a bounded number of threads serves any number of idle
// clients, with limits on connections, idle time and header memory.
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <stop_token>
#include <thread>

#include "common/mutex.h"
#include "common/thread_name.h"
#include "ops/connection_table.h"

namespace neardup::ops {


namespace {

// The threads serving the connections; each polls its own share of them.
constexpr unsigned kThreads = 2;
// Connections accepted by the kernel, waiting for the threads. A burst past it is dropped, and
// a client whose connection attempt was dropped tries again only after a second.
constexpr int kListenBacklog = 1024;
// How often the deadlines are checked.
constexpr auto kWatchInterval = std::chrono::milliseconds(100);

// The bytes of request bodies being received, on all connections, against a budget.
class BodyBudget {
 public:
  explicit BodyBudget(std::size_t limit) : limit_(limit) {}

  // Takes `bytes` if they fit; false (nothing taken) if they would go past the budget.
  bool take(std::size_t bytes) {
    std::size_t held = held_.load();
    do {
      if (bytes > limit_ - held) return false;
    } while (!held_.compare_exchange_weak(held, held + bytes));
    return true;
  }
  void give_back(std::size_t bytes) { held_ -= bytes; }
  std::size_t held() const { return held_.load(); }
  std::size_t limit() const { return limit_; }

 private:
  const std::size_t limit_;
  std::atomic<std::size_t> held_{0};
};

// The connections the threads serve, under ConnectionTable's policy: the table behind a lock,
// keyed by socket, and a thread (nd:http-watch) that closes those past their deadline. Closing
// is shutdown(): the connection's own thread then sees its stream end and closes it as it would
// any other. The socket number stays taken until libmicrohttpd reports the connection closed
// (closed() here, under the same lock), so a shutdown never reaches another connection's socket.
class Connections {
 public:
  Connections()
      : table_({.max_connections = kMaxConnections,
                .max_per_client = kMaxConnectionsPerClient,
                .head_time = std::chrono::seconds(kHeaderSeconds),
                .min_body_rate = kMinBodyBytesPerSecond}),
        watcher_([this] { watch(); }) {}

  void opened(MHD_Connection* connection) {
    const int key = socket_of(connection);
    const std::string client = client_of(connection);
    MutexLock lock(mutex_);
    if (auto victim = table_.opened(key, client, Clock::now())) ::shutdown(*victim, SHUT_RDWR);
  }
  void head_received(MHD_Connection* connection, std::size_t body_bytes) {
    MutexLock lock(mutex_);
    table_.head_received(socket_of(connection), body_bytes, Clock::now());
  }
  void answering(MHD_Connection* connection) {
    MutexLock lock(mutex_);
    table_.answering(socket_of(connection));
  }
  void request_ended(MHD_Connection* connection) {
    MutexLock lock(mutex_);
    table_.request_ended(socket_of(connection), Clock::now());
  }
  void closed(MHD_Connection* connection) {
    MutexLock lock(mutex_);
    table_.closed(socket_of(connection));
  }
  std::size_t held() const {
    MutexLock lock(mutex_);
    return table_.held();
  }
  void stop() EXCLUDES(mutex_) {
    {
      MutexLock lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (watcher_.joinable()) watcher_.join();
  }

 private:
  using Clock = ConnectionTable::Clock;

  static int socket_of(MHD_Connection* connection) {
    return MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD)->connect_fd;
  }
  // The client's address (without the port): an IPv4 client is the same over IPv6.
  static std::string client_of(MHD_Connection* connection) {
    const sockaddr* address =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS)->client_addr;
    if (address->sa_family == AF_INET) {
      const auto& ip = reinterpret_cast<const sockaddr_in*>(address)->sin_addr;
      return std::string(reinterpret_cast<const char*>(&ip), sizeof ip);
    }
    if (address->sa_family == AF_INET6) {
      const auto& ip = reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr;
      const auto* bytes = reinterpret_cast<const char*>(&ip);
      return IN6_IS_ADDR_V4MAPPED(&ip) ? std::string(bytes + 12, 4)
                                       : std::string(bytes, sizeof ip);
    }
    return {};  // not an IP socket: one client
  }

  void watch() EXCLUDES(mutex_) {
    name_this_thread("nd:http-watch");
    MutexLock lock(mutex_);
    while (!stopping_) {
      for (int key : table_.expired(Clock::now())) ::shutdown(key, SHUT_RDWR);
      wake_.wait_for(mutex_, kWatchInterval);  // or until stop()
    }
  }

  mutable Mutex mutex_;
  ConnectionTable table_ GUARDED_BY(mutex_);
  bool stopping_ GUARDED_BY(mutex_) = false;
  CondVar wake_;
  std::jthread watcher_;  // last: started once the rest exists
};

}  // namespace

struct MetricsServer::Routes {
  Routes(const MetricsRegistry& registry, HealthCheck health, HealthCheck ready,
         QueryHandlers queries)
      : registry(&registry),
        health(std::move(health)),
        ready(std::move(ready)),
        queries(std::move(queries)),
        bodies(this->queries.body_budget_bytes) {}

  const MetricsRegistry* registry;
  HealthCheck health;
  HealthCheck ready;
  QueryHandlers queries;
  BodyBudget bodies;
  Connections connections;
};

namespace {

// A POST request's body, gathered over the calls libmicrohttpd makes as it arrives, in the
// bytes reserved for it in the budget.
struct Upload {
  std::string body;
  std::size_t reserved = 0;
  bool too_large = false;  // past QueryHandlers::max_body_bytes: refused once it has arrived
};

MHD_Result reply(MHD_Connection* connection, unsigned status, std::string_view body,
                 const char* type, const char* retry_after = nullptr) {
  MHD_Response* response = MHD_create_response_from_buffer(
      body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  if (retry_after != nullptr) {
    MHD_add_response_header(response, MHD_HTTP_HEADER_RETRY_AFTER, retry_after);
  }
  MHD_Result queued = MHD_queue_response(connection, status, response);
  MHD_destroy_response(response);
  return queued;
}

MHD_Result reply_text(MHD_Connection* connection, unsigned status, std::string_view text,
                      const char* retry_after = nullptr) {
  return reply(connection, status, std::string(text) + "\n", "text/plain; charset=utf-8",
               retry_after);
}

MHD_Result reply_json(MHD_Connection* connection, const HttpAnswer& answer) {
  return reply(connection, static_cast<unsigned>(answer.status), answer.json + "\n",
               "application/json");
}

MHD_Result reply_check(MHD_Connection* connection, const HealthCheck& check,
                       std::string_view good) {
  auto verdict = check ? check() : std::expected<void, std::string>{};
  return verdict ? reply_text(connection, MHD_HTTP_OK, good)
                 : reply_text(connection, MHD_HTTP_SERVICE_UNAVAILABLE, verdict.error());
}

MHD_Result reply_too_large(MHD_Connection* connection, std::size_t limit) {
  return reply_text(connection, MHD_HTTP_CONTENT_TOO_LARGE,
                    "request body over " + std::to_string(limit) + " bytes");
}

std::string header(MHD_Connection* connection, const char* name) {
  const char* value = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name);
  return value != nullptr ? value : "";
}

// POST /v1/lookup: called first with the headers, then once per piece of the body, then with
// no data once the body is complete.
MHD_Result serve_lookup(MetricsServer::Routes& routes, MHD_Connection* connection,
                        const char* data, std::size_t* size, void** state) {
  const std::size_t limit = routes.queries.max_body_bytes;
  auto* upload = static_cast<Upload*>(*state);
  if (upload == nullptr) {
    // The most the body may bring: its Content-Length, or the limit when a Transfer-Encoding
    // (any) leaves its length unknown until its end. libmicrohttpd has refused a malformed
    // Content-Length (400).
    std::size_t bytes = limit;
    if (MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
                                    MHD_HTTP_HEADER_TRANSFER_ENCODING) == nullptr) {
      std::string length = header(connection, MHD_HTTP_HEADER_CONTENT_LENGTH);
      bytes = 0;
      auto [end, ec] = std::from_chars(length.data(), length.data() + length.size(), bytes);
      if (!length.empty() && (ec != std::errc() || bytes > limit)) {
        return reply_too_large(connection, limit);
      }
    }
    // Answered before the body is read, the request ends there and its connection is closed.
    if (!routes.bodies.take(bytes)) {
      return reply_text(connection, MHD_HTTP_SERVICE_UNAVAILABLE,
                        "busy: the request bodies being received fill the listener's " +
                            std::to_string(routes.bodies.limit()) + " bytes, retry",
                        "1");
    }
    upload = new Upload{.reserved = bytes};
    *state = upload;
    upload->body.reserve(bytes);  // one allocation, of bytes the budget holds
    routes.connections.head_received(connection, bytes);
    return MHD_YES;
  }
  if (*size > 0) {
    // libmicrohttpd takes no response while a body arrives: past the bytes reserved (the limit,
    // when the length was not declared) the rest is read and dropped, and the answer waits for
    // its end.
    upload->too_large = upload->too_large || upload->body.size() + *size > upload->reserved;
    if (upload->too_large) {
      upload->body.clear();
    } else {
      upload->body.append(data, *size);
    }
    *size = 0;
    return MHD_YES;
  }
  routes.connections.answering(connection);
  if (upload->too_large) return reply_too_large(connection, limit);
  return reply_json(connection,
                    routes.queries.lookup(std::move(upload->body),
                                          header(connection, MHD_HTTP_HEADER_CONTENT_TYPE)));
}

MHD_Result serve(void* cls, MHD_Connection* connection, const char* url_text,
                 const char* method_text, const char* /*version*/, const char* data,
                 std::size_t* size, void** state) {
  auto& routes = *static_cast<MetricsServer::Routes*>(cls);
  const std::string_view url = url_text, method = method_text;
  const bool get = method == MHD_HTTP_METHOD_GET || method == MHD_HTTP_METHOD_HEAD;
  if (method == MHD_HTTP_METHOD_POST && url == "/v1/lookup" && routes.queries.lookup) {
    return serve_lookup(routes, connection, data, size, state);
  }
  // Every other request is answered at its first call; a body it brings is not read.
  routes.connections.answering(connection);
  if (get && url == "/metrics") {
    return reply(connection, MHD_HTTP_OK, routes.registry->render(),
                 std::string(kExpositionContentType).c_str());
  }
  if (get && url == "/healthz") return reply_check(connection, routes.health, "ok");
  if (get && url == "/readyz") return reply_check(connection, routes.ready, "ready");
  if (get && url == "/v1/explain" && routes.queries.explain) {
    // libmicrohttpd has percent-decoded the arguments.
    const char* id = MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, "id");
    const char* with = MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, "with");
    if (id == nullptr || *id == '\0') {
      return reply_json(connection, {400, R"({"error":"bad_request","detail":"id is required"})"});
    }
    return reply_json(connection, routes.queries.explain(id, with ? with : ""));
  }
  constexpr std::string_view kPages = "/v1/pages/";
  if (get && url.starts_with(kPages) && url.size() > kPages.size() && routes.queries.page) {
    // libmicrohttpd has percent-decoded the path.
    return reply_json(connection, routes.queries.page(std::string(url.substr(kPages.size()))));
  }
  return reply_text(connection, MHD_HTTP_NOT_FOUND, "not found");
}

void request_done(void* cls, MHD_Connection* connection, void** state,
                  MHD_RequestTerminationCode) {
  auto& routes = *static_cast<MetricsServer::Routes*>(cls);
  if (auto* upload = static_cast<Upload*>(*state)) {
    routes.bodies.give_back(upload->reserved);
    delete upload;
    *state = nullptr;
  }
  routes.connections.request_ended(connection);
}

void connection_changed(void* cls, MHD_Connection* connection, void**,
                        MHD_ConnectionNotificationCode change) {
  auto& connections = static_cast<MetricsServer::Routes*>(cls)->connections;
  if (change == MHD_CONNECTION_NOTIFY_STARTED) {
    connections.opened(connection);
  } else {
    connections.closed(connection);
  }
}

// The listening socket, bound here rather than by libmicrohttpd so that a failure names the
// system's reason. SO_REUSEADDR only (restart over TIME_WAIT): with SO_REUSEPORT a second daemon
// could bind the same port silently. Returns the socket and the bound port.
std::expected<std::pair<int, int>, std::string> listen_on(const ListenAddress& address,
                                                          std::string_view listen) {
  auto failed = [&](const std::string& why) {
    return std::unexpected("metrics.listen: cannot listen on " + std::string(listen) + ": " + why);
  };
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  std::string port = std::to_string(address.port);
  if (int err = ::getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found); err != 0) {
    return failed(::gai_strerror(err));
  }
  std::string why = "no address";
  int fd = -1;
  for (addrinfo* ai = found; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, kListenBacklog) != 0) {
      why = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) return failed(why);
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
  int bound_port = bound.ss_family == AF_INET6
                       ? ntohs(reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port)
                       : ntohs(reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
  return std::pair{fd, bound_port};
}

}  // namespace

MetricsServer::MetricsServer(ListenAddress address, std::unique_ptr<Routes> routes)
    : address_(std::move(address)), routes_(std::move(routes)) {}

MetricsServer::~MetricsServer() { stop(); }

std::expected<std::unique_ptr<MetricsServer>, std::string> MetricsServer::start(
    std::string_view listen, const MetricsRegistry& registry, HealthCheck health,
    HealthCheck ready, QueryHandlers queries) {
  if (queries.lookup && queries.body_budget_bytes < queries.max_body_bytes) {
    return std::unexpected("metrics.queries: a body budget of " +
                           std::to_string(queries.body_budget_bytes) +
                           " bytes cannot hold one body of the largest size, " +
                           std::to_string(queries.max_body_bytes) + " bytes");
  }
  auto address = parse_listen_address(listen, "metrics.listen");
  if (!address) return std::unexpected(address.error());
  auto socket = listen_on(*address, listen);
  if (!socket) return std::unexpected(socket.error());
  address->port = socket->second;

  auto routes = std::make_unique<Routes>(registry, std::move(health), std::move(ready),
                                         std::move(queries));
  std::unique_ptr<MetricsServer> server(new MetricsServer(*address, std::move(routes)));
  Routes* cls = server->routes_.get();
  server->daemon_ = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, nullptr, nullptr, &serve, cls,
      MHD_OPTION_LISTEN_SOCKET, socket->first, MHD_OPTION_THREAD_POOL_SIZE, kThreads,
      MHD_OPTION_CONNECTION_LIMIT, kMaxConnections + kSpareConnections,
      MHD_OPTION_CONNECTION_TIMEOUT, kIdleSeconds, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
      kHeaderBytes, MHD_OPTION_NOTIFY_COMPLETED, &request_done, cls,
      MHD_OPTION_NOTIFY_CONNECTION, &connection_changed, cls, MHD_OPTION_END);
  if (server->daemon_ == nullptr) {
    ::close(socket->first);
    return std::unexpected("metrics.listen: the server on " + std::string(listen) +
                           " could not start its threads");
  }
  return server;
}

void MetricsServer::stop() {
  if (daemon_ == nullptr) return;
  routes_->connections.stop();
  MHD_stop_daemon(daemon_);  // also closes the listening socket
  daemon_ = nullptr;
}

MetricsServer::Load MetricsServer::load() const {
  return {.connections = routes_->connections.held(), .body_bytes = routes_->bodies.held()};
}

}  // namespace neardup::ops
