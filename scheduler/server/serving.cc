#include "scheduler/server/serving.h"

#include <chrono>
#include <cctype>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/daemon/config_flags.h"
#include "common/http/http_server_beast.h"

namespace phalanx::scheduler {
namespace {

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// INVALID_ARGUMENT -> "invalid_argument", OK -> "ok": the code as a label value.
std::string CodeLabel(absl::StatusCode code) {
  std::string label = absl::StatusCodeToString(code);  // "INVALID_ARGUMENT", "" if unknown
  if (label.empty()) return "unknown";
  for (char& c : label) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return label;
}

}  // namespace

http::ServerOptions HttpServerOptions(const SchedulerConfig& config, const std::string& address,
                                      int threads, bool per_client) {
  HostPort hp = *ParseHostPort(address, "address");  // validated when the flags were parsed
  return {.address = hp.host,
          .port = hp.port,
          .threads = threads,
          .idle_timeout_ms = config.http_read_timeout_seconds * 1000,
          .max_connections = config.http_max_connections,
          .max_connections_per_client = per_client ? config.http_max_connections_per_client : 0};
}

std::unique_ptr<http::HttpServer> NewExtenderServer(const SchedulerConfig& config,
                                                    extender::Extender& extender,
                                                    metrics::Registry& registry,
                                                    http::RejectionMetrics& rejections) {
  auto& extender_latency = registry.AddHistogram(
      "phalanx_extender_request_duration_seconds",
      "Time to answer one kube-scheduler extender call, by verb.", {"verb"},
      metrics::Buckets::Latency());
  auto& extender_requests = registry.AddCounter(
      "phalanx_extender_requests_total",
      "Extender calls answered, by verb and outcome (pinned, pass_through, no_reservation, ...).",
      {"verb", "outcome"});
  http::ServerOptions options =
      HttpServerOptions(config, config.extender_address, config.http_threads);
  options.max_body_bytes = static_cast<size_t>(config.extender_max_body_bytes);
  options.on_rejected = rejections.For("extender");
  std::unique_ptr<http::HttpServer> webhook = http::NewBeastServer(std::move(options));
  for (extender::Verb verb :
       {extender::Verb::kFilter, extender::Verb::kPrioritize, extender::Verb::kBind}) {
    std::string name(extender::VerbName(verb));
    auto& latency = extender_latency.WithLabels({name});
    // One counter per outcome, looked up now: the hot path then takes no lock.
    auto outcomes = std::make_shared<std::vector<metrics::Counter*>>();
    for (int o = 0; o <= static_cast<int>(extender::Outcome::kBadRequest); ++o) {
      outcomes->push_back(&extender_requests.WithLabels(
          {name, std::string(extender::OutcomeName(static_cast<extender::Outcome>(o)))}));
    }
    http::Handler handler = extender::MakeHandler(
        extender, verb, [outcomes](extender::Verb, extender::Outcome outcome) {
          (*outcomes)[static_cast<size_t>(outcome)]->Inc();
        });
    webhook->Handle(absl::StrCat("/scheduler/", name),
                    [handler = std::move(handler), &latency](const http::Request& request) {
                      auto start = std::chrono::steady_clock::now();
                      http::Response response = handler(request);
                      latency.Observe(Since(start));
                      return response;
                    });
  }
  return webhook;
}

placement::PlacementGrpcService::RpcObserver GrpcMetrics(metrics::Registry& registry) {
  auto& latency = registry.AddHistogram("phalanx_grpc_request_duration_seconds",
                                        "Time to answer one Placement gRPC call, by method.",
                                        {"method"}, metrics::Buckets::Latency());
  auto& requests = registry.AddCounter(
      "phalanx_grpc_requests_total",
      "Placement gRPC calls answered, by method and result (ok, or the status code).",
      {"method", "result"});
  return [&latency, &requests](std::string_view method, double seconds, absl::StatusCode code) {
    latency.WithLabels({std::string(method)}).Observe(seconds);
    requests.WithLabels({std::string(method), CodeLabel(code)}).Inc();
  };
}

absl::StatusOr<std::optional<placement::TlsPem>> LoadGrpcTls(const SchedulerConfig& config) {
  if (!config.grpc_tls_writers.empty() && config.grpc_tls_client_ca.empty()) {
    return absl::InvalidArgumentError(
        "--grpc-tls-writers needs --grpc-tls-client-ca: without client certificates no client "
        "can be told from another");
  }
  return placement::LoadServerTls(
      {.cert = config.grpc_tls_cert, .key = config.grpc_tls_key, .ca = config.grpc_tls_client_ca},
      {"--grpc-tls-cert", "--grpc-tls-key", "--grpc-tls-client-ca"});
}

absl::StatusOr<placement::RunningPlacementServer> StartGrpcServer(
    const SchedulerConfig& config, const std::optional<placement::TlsPem>& tls,
    placement::PlacementGrpcService& service) {
  return placement::StartPlacementServer(
      service, {.address = config.grpc_address,
                .max_receive_message_bytes = config.grpc_max_message_bytes,
                .tls = tls});
}

}  // namespace phalanx::scheduler
