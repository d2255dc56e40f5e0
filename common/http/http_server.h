// HttpServer: the small HTTP/1.1 server behind phalanx-scheduler's extender webhook and both
// binaries' /healthz, /readyz and /metrics. An interface, so handlers are tested without sockets
// and the Boost.Beast implementation (http_server_beast.h) stays in one adapter file.
//
//   auto server = phalanx::http::NewBeastServer({.address = "127.0.0.1", .port = 0});
//   server->Handle("/healthz", [](const http::Request&) { return http::Response::Text(200, "ok"); });
//   RETURN_IF_ERROR(server->Start());
//   int port = server->port();   // the bound port (useful with port 0)
//   ...
//   server->Stop();              // stops accepting, finishes requests in flight, joins threads
//
// Handlers run on the server's worker threads, possibly concurrently: they must be thread-safe.
// A handler never sees a request over `max_body_bytes` (the server answers 413 itself), and an
// unparseable request line or header gets a 400 from the server without reaching any handler.
// Every such refusal is reported to `ServerOptions::on_rejected` (a metric, in the binaries).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace phalanx::http {

struct Request {
  std::string method;  // "GET", "POST", ...
  std::string path;    // without the query string: "/scheduler/filter"
  std::string query;   // after '?', "" if none
  std::string content_type;
  std::string body;
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // Further header fields, e.g. {"Allow", "GET, HEAD"} on a 405.
  std::vector<std::pair<std::string, std::string>> headers = {};

  static Response Text(int status, std::string body) {
    return {status, "text/plain; charset=utf-8", std::move(body)};
  }
  static Response Json(int status, std::string body) {
    return {status, "application/json", std::move(body)};
  }
};

using Handler = std::function<Response(const Request&)>;

// A request (or connection) the server refused itself, before any handler ran.
enum class Rejection : uint8_t {
  kMalformed,          // 400: unparseable request line, header or chunk framing
  kHeaderTooLarge,     // 431: request header over 8 KiB
  kBodyTooLarge,       // 413: body over max_body_bytes
  kTimeout,            // a request begun but not received within idle_timeout_ms: closed
  kTooManyConnections  // 503: max_connections already open (in all or from that client);
                       // answered and closed at once
};
inline constexpr Rejection kLastRejection = Rejection::kTooManyConnections;
// "malformed", "header_too_large", "body_too_large", "timeout", "too_many_connections".
std::string_view RejectionName(Rejection rejection);

struct ServerOptions {
  std::string address = "127.0.0.1";
  int port = 0;  // 0 picks a free port; read it back with port()
  int threads = 2;
  size_t max_body_bytes = 8 << 20;  // larger bodies get 413 without reaching a handler
  // A connection idle (or slow to send a request) this long is closed.
  int idle_timeout_ms = 60'000;
  // Open connections at most; one more is answered 503 and closed. Bounds the sockets and
  // buffers a flood of slow clients can hold (each up to max_body_bytes while its body arrives).
  int max_connections = 512;
  // Open connections from one client address at most (0 = no such limit); one more is
  // answered 503 and closed. Keeps one client from holding every slot of max_connections, and
  // so from failing the kubelet's probes on the same port.
  int max_connections_per_client = 0;
  // Called on a worker thread for every refusal above; must be thread-safe and quick.
  std::function<void(Rejection)> on_rejected = nullptr;
};

class HttpServer {
 public:
  virtual ~HttpServer() = default;

  // Routes requests whose path equals `path`, or starts with it when it ends in '/'
  // ("/scheduler/" takes "/scheduler/filter"). The longest match wins; no match is a 404.
  // Register every handler before Start().
  virtual void Handle(std::string path, Handler handler) = 0;

  // Binds and starts serving. Fails (e.g. address in use) without leaving threads behind.
  virtual absl::Status Start() = 0;

  // The bound port once started.
  virtual int port() const = 0;

  // Stops accepting, lets requests in flight finish, closes connections, joins the threads.
  // Idempotent; also done by the destructor.
  virtual void Stop() = 0;
};

}  // namespace phalanx::http
