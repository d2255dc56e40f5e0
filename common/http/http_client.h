// HttpClient: a small synchronous HTTP/1.1 client that keeps its connection open between
// requests and opens a new one when the server has closed it. For tests, the extender load
// generator and probes; not for talking to the Kubernetes API (kube/ has its own transport).
//
//   phalanx::http::HttpClient client("127.0.0.1", port);
//   ASSIGN_OR_RETURN(phalanx::http::Response r,
//                    client.Post("/scheduler/filter", body, "application/json"));
//   if (r.status != 200) ...
//
// Any HTTP status is a successful exchange (look at Response::status). Errors: Unavailable
// when the server cannot be reached or drops the connection, DeadlineExceeded when an
// operation takes longer than timeout_ms, Internal for a response that does not parse or
// exceeds max_response_bytes.
//
// A request that fails on a reused connection before any byte of a response arrives is sent
// once more on a new connection: the server closed the idle connection as the request left
// (the race every keep-alive client has). Retrying is safe for the requests Phalanx sends
// (extender calls, probes, scrapes), not for every POST in general.
//
// Not thread-safe: give each thread its own client.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/http/http_server.h"

namespace phalanx::http {
namespace internal {
class ClientConnection;  // http_client.cc; keeps Boost out of this header
}  // namespace internal

struct ClientOptions {
  int timeout_ms = 30'000;  // for each of connect, send and receive
  size_t max_response_bytes = 64 << 20;
};

class HttpClient {
 public:
  // `host` is an IP address or a name to resolve (on first use).
  HttpClient(std::string host, int port, ClientOptions options = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  absl::StatusOr<Response> Get(std::string_view target);
  absl::StatusOr<Response> Post(std::string_view target, std::string_view body,
                                std::string_view content_type);
  // Any method; `content_type` may be empty (no Content-Type header).
  absl::StatusOr<Response> Send(std::string_view method, std::string_view target,
                                std::string_view body, std::string_view content_type);

  // Closes the connection; the next request opens a new one.
  void Close();

  // How many connections this client has opened: 1 after any number of requests while the
  // server keeps the connection alive.
  int connections_opened() const;

 private:
  std::unique_ptr<internal::ClientConnection> connection_;
};

}  // namespace phalanx::http
