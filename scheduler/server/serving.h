// phalanx-scheduler's serving endpoints as main.cc builds them: the extender webhook on its HTTP
// server and the Placement gRPC server, each with the limits of SchedulerConfig and its metrics.
// In a library of its own so that the hostile-input tests (tests/integration/hostile/) run the
// very servers the binary runs, without an API server behind them.
//
//   metrics::Registry registry;
//   http::RejectionMetrics rejections(registry);
//   auto webhook = NewExtenderServer(config, extender, registry, rejections);
//   RETURN_IF_ERROR(webhook->Start());
//   placement::PlacementGrpcService grpc(service, summary, GrpcMetrics(registry));
//   ASSIGN_OR_RETURN(auto server, StartGrpcServer(config, grpc));
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/http/http_server.h"
#include "common/http/probe_server.h"
#include "common/metrics/registry.h"
#include "scheduler/extender/extender.h"
#include "scheduler/grpc/placement_grpc_server.h"
#include "scheduler/server/scheduler_config.h"

namespace phalanx::scheduler {

// ServerOptions for an HTTP server of this binary on `address` (host:port, already validated by
// the flag parser): the read timeout and connection limit of `config`. `per_client`: the health
// port's limit of connections from one client address applies (the extender's port listens
// on 127.0.0.1 for kube-scheduler alone, whose binds open connections as they need).
http::ServerOptions HttpServerOptions(const SchedulerConfig& config, const std::string& address,
                                      int threads, bool per_client = false);

// The extender webhook on config.extender_address: POST <prefix>/filter, /prioritize and /bind
// under /scheduler/, bodies up to config.extender_max_body_bytes. Registers
// phalanx_extender_request_duration_seconds and phalanx_extender_requests_total in `registry`
// and counts the server's refusals as server="extender". Not started.
std::unique_ptr<http::HttpServer> NewExtenderServer(const SchedulerConfig& config,
                                                    extender::Extender& extender,
                                                    metrics::Registry& registry,
                                                    http::RejectionMetrics& rejections);

// Registers phalanx_grpc_request_duration_seconds and phalanx_grpc_requests_total and returns the
// observer that feeds them.
placement::PlacementGrpcService::RpcObserver GrpcMetrics(metrics::Registry& registry);

// The Placement gRPC server's TLS from config.grpc_tls_*: nullopt for plain text;
// InvalidArgument naming the flag when a file is missing, unreadable or not the PEM it should be,
// or when --grpc-tls-writers is given without --grpc-tls-client-ca.
absl::StatusOr<std::optional<placement::TlsPem>> LoadGrpcTls(const SchedulerConfig& config);

// Starts the Placement gRPC server on config.grpc_address with config.grpc_max_message_bytes
// and `tls` (LoadGrpcTls).
absl::StatusOr<placement::RunningPlacementServer> StartGrpcServer(
    const SchedulerConfig& config, const std::optional<placement::TlsPem>& tls,
    placement::PlacementGrpcService& service);

}  // namespace phalanx::scheduler
