#include "common/http/probe_server.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/http/http_server_beast.h"
#include "common/http/metrics_handler.h"

namespace phalanx::http {

RejectionMetrics::RejectionMetrics(metrics::Registry& registry)
    : family_(registry.AddCounter(
          "phalanx_http_requests_rejected_total",
          "HTTP requests or connections the server refused before any handler ran, by server "
          "and reason.",
          {"server", "reason"})) {}

std::function<void(Rejection)> RejectionMetrics::For(const std::string& server) {
  // Looked up once: a refusal then costs one relaxed increment, no lock.
  auto counters = std::make_shared<std::vector<metrics::Counter*>>();
  for (int r = 0; r <= static_cast<int>(kLastRejection); ++r) {
    counters->push_back(&family_.WithLabels(
        {server, std::string(RejectionName(static_cast<Rejection>(r)))}));
  }
  return [counters](Rejection rejection) { (*counters)[static_cast<size_t>(rejection)]->Inc(); };
}

Handler AllowMethods(std::initializer_list<std::string_view> methods, Handler handler) {
  std::vector<std::string> allowed(methods.begin(), methods.end());
  std::string allow = absl::StrJoin(allowed, ", ");
  std::string spoken = absl::StrJoin(allowed, " or ");
  return [allowed = std::move(allowed), allow = std::move(allow), spoken = std::move(spoken),
          handler = std::move(handler)](const Request& request) {
    for (const std::string& method : allowed) {
      if (request.method == method) return handler(request);
    }
    Response response = Response::Text(
        405, absl::StrCat(request.path, " takes ", spoken, ", not ", request.method, "\n"));
    response.headers.emplace_back("Allow", allow);
    return response;
  };
}

std::unique_ptr<HttpServer> NewProbeServer(ServerOptions options,
                                           const metrics::Registry& registry,
                                           RejectionMetrics& rejections,
                                           std::function<Response()> readyz) {
  options.max_body_bytes = kProbeMaxBodyBytes;
  options.on_rejected = rejections.For("probes");
  std::unique_ptr<HttpServer> server = NewBeastServer(std::move(options));
  server->Handle("/healthz", AllowMethods({"GET", "HEAD"}, [](const Request&) {
                   return Response::Text(200, "ok\n");
                 }));
  server->Handle("/readyz", AllowMethods({"GET", "HEAD"}, [readyz = std::move(readyz)](
                                                              const Request&) { return readyz(); }));
  server->Handle("/metrics", AllowMethods({"GET", "HEAD"}, MetricsHandler(registry)));
  return server;
}

}  // namespace phalanx::http
