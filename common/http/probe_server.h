// The probe server both daemons run on their --health-address: /healthz, /readyz and /metrics,
// GET and HEAD only (405 with an Allow header otherwise), request bodies capped at
// kProbeMaxBodyBytes, and every refusal counted in phalanx_http_requests_rejected_total.
//
//   metrics::Registry registry;
//   http::RejectionMetrics rejections(registry);
//   auto probes = http::NewProbeServer(
//       {.address = "127.0.0.1", .port = 8080, .threads = 1}, registry, rejections,
//       [&] { return ready ? http::Response::Text(200, "ok\n")
//                          : http::Response::Text(503, "not synced yet\n"); });
//   RETURN_IF_ERROR(probes->Start());
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "common/http/http_server.h"
#include "common/metrics/registry.h"

namespace phalanx::http {

// Probes and scrapes send no body; anything larger is refused with 413 before a handler runs.
inline constexpr size_t kProbeMaxBodyBytes = 64 << 10;

// phalanx_http_requests_rejected_total{server, reason}: what an HttpServer refused before any
// handler ran (Rejection). One family per registry, one `server` label value per server.
class RejectionMetrics {
 public:
  explicit RejectionMetrics(metrics::Registry& registry);

  // A ServerOptions::on_rejected for the server called `server` ("extender", "probes"). Every
  // reason's series exists, at 0, from this call on.
  std::function<void(Rejection)> For(const std::string& server);

 private:
  metrics::Family<metrics::Counter>& family_;
};

// Wraps `handler` so that only `methods` reach it; any other method gets 405 naming the path and
// the methods, with an Allow header.
Handler AllowMethods(std::initializer_list<std::string_view> methods, Handler handler);

// `options.max_body_bytes` is set to kProbeMaxBodyBytes and `options.on_rejected` to
// rejections.For("probes"). `registry` must outlive the server; `readyz` is called per probe
// from a worker thread.
std::unique_ptr<HttpServer> NewProbeServer(ServerOptions options,
                                           const metrics::Registry& registry,
                                           RejectionMetrics& rejections,
                                           std::function<Response()> readyz);

}  // namespace phalanx::http
