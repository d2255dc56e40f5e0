// The HTTP boundary of the Kubernetes client. Everything above it (Client, watches, informers,
// leader election) speaks to a Transport, so unit tests mock it and fault tests wrap it; the
// only implementation that opens sockets is transport_cpprest.cc.
//
//   kube::HttpRequest req{.method = "GET", .path = "/api/v1/namespaces/default/pods/p"};
//   ASSIGN_OR_RETURN(kube::HttpResponse resp, transport.Send(req));
//   if (resp.status != 200) return kube::StatusFromResponse(resp);
//
//   // Streaming (watches): chunks arrive as the server flushes them.
//   transport.Stream(req, [&](std::string_view chunk) { parser.Feed(chunk); return true; }, &stop);
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "kube/cancellation.h"

namespace kube {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

// The value of header `name` (case-insensitive), or "" if absent.
std::string FindHeader(const HttpHeaders& headers, std::string_view name);

struct HttpRequest {
  std::string method = "GET";
  // Path plus query, already escaped: "/api/v1/pods?limit=500&continue=abc".
  std::string path;
  HttpHeaders headers;
  std::string body;
};

struct HttpResponse {
  int status = 0;
  HttpHeaders headers;
  std::string body;
};

// Called with each piece of a streamed body, in order. Return false to stop reading.
using ChunkCallback = std::function<bool(std::string_view chunk)>;

class Transport {
 public:
  virtual ~Transport() = default;

  // One request, whole response. A response with any HTTP status is OK here (callers map 4xx/5xx
  // with StatusFromResponse); an error status means no response: Unavailable for connection and
  // TLS failures, DeadlineExceeded for a timeout.
  virtual absl::StatusOr<HttpResponse> Send(const HttpRequest& request) = 0;

  // Like Send, but for a 2xx response the body is handed to `on_chunk` as it arrives instead of
  // being collected; returns (with an empty body) when the server ends the response, `on_chunk`
  // returns false, or `cancel` fires (then the connection is closed; the result is Cancelled).
  // A non-2xx response is returned whole, without calling `on_chunk`. A connection that breaks
  // mid-body is Unavailable.
  virtual absl::StatusOr<HttpResponse> Stream(const HttpRequest& request,
                                              const ChunkCallback& on_chunk,
                                              const Cancellation* cancel) = 0;
};

}  // namespace kube
