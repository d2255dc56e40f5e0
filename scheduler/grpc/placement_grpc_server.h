// The server side of the phalanx.v1alpha1.Placement gRPC API: PlacementGrpcService forwards each
// RPC to a placement::PlacementService (in phalanx-scheduler, the InProcessPlacementService that
// owns the live snapshot), and StartPlacementServer listens for it.
//
//   PlacementGrpcService grpc_service(
//       placement_service,
//       [&](const SummaryOptions& o) {
//         SnapshotSummary s;
//         placement_service.Read([&](const ClusterSnapshot& snap) { s = Summarize(snap, o); });
//         return s;
//       },
//       [&](std::string_view method, double seconds, absl::StatusCode code) { ... });
//   ASSIGN_OR_RETURN(RunningPlacementServer server,
//                    StartPlacementServer(grpc_service, {.address = "0.0.0.0:9443"}));
//   spdlog::info("Placement API on port {}", server.port);
//   ...
//   server.server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
//
// Requests are decoded with the wire limits of proto_convert.h; errors come back as gRPC statuses
// with the core's code and message unchanged, marked as the service's own (see
// kErrorOriginTrailer) so the client can tell them from transport failures. Plain text unless
// PlacementServerOptions::tls is set (tls.h; the Helm chart sets it, with client certificates
// required).
//
// Thread-safety: gRPC calls the handlers from its own thread pool, so the PlacementService, the
// summary callback and the observer must be safe to call concurrently.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "grpcpp/server.h"
#include "phalanx/v1alpha1/placement.grpc.pb.h"
#include "scheduler/grpc/proto_convert.h"
#include "scheduler/grpc/tls.h"
#include "scheduler/placement_service.h"
#include "scheduler/snapshot_summary.h"

namespace phalanx::placement {

class PlacementGrpcService final : public pb::Placement::Service {
 public:
  // Answers the Snapshot RPC; null makes Snapshot UNIMPLEMENTED.
  using SummaryFunction = std::function<SnapshotSummary(const SummaryOptions&)>;
  // Called once per RPC with the method name ("ReserveBatch", ...), the seconds spent in the
  // handler and the RPC's status code (a ReserveBatch with per-request errors is OK). Calls gRPC
  // refuses itself (a message over the receive limit, an unknown method) never reach it.
  using RpcObserver =
      std::function<void(std::string_view method, double seconds, absl::StatusCode code)>;

  // `service` must outlive this object.
  PlacementGrpcService(PlacementService& service, SummaryFunction summary,
                       RpcObserver observer = nullptr);

  ::grpc::Status ReserveBatch(::grpc::ServerContext* context, const pb::ReserveBatchRequest* in,
                              pb::ReserveBatchResponse* out) override;
  ::grpc::Status Release(::grpc::ServerContext* context, const pb::ReleaseRequest* in,
                         pb::ReleaseResponse* out) override;
  ::grpc::Status Resize(::grpc::ServerContext* context, const pb::ResizeRequest* in,
                        pb::PlacementResult* out) override;
  ::grpc::Status ReplaceNodes(::grpc::ServerContext* context, const pb::ReplaceNodesRequest* in,
                              pb::PlacementResult* out) override;
  ::grpc::Status PlanPreemption(::grpc::ServerContext* context,
                                const pb::PlanPreemptionRequest* in,
                                pb::PreemptionPlan* out) override;
  ::grpc::Status Explain(::grpc::ServerContext* context, const pb::GangRequest* in,
                         pb::PlacementResult* out) override;
  ::grpc::Status EstimateStart(::grpc::ServerContext* context,
                               const pb::EstimateStartRequest* in,
                               pb::StartEstimate* out) override;
  ::grpc::Status Snapshot(::grpc::ServerContext* context, const pb::SnapshotRequest* in,
                          pb::SnapshotSummary* out) override;

  // Authorization: after this, the calls that change reservations (ReserveBatch, Release,
  // Resize, ReplaceNodes) are served only to clients whose TLS certificate names one of
  // `writers` (its subject common name or a subject alternative name); any other client gets
  // PERMISSION_DENIED and may still read (Snapshot, Explain, PlanPreemption, EstimateStart).
  // Meant for a server that requires client certificates (mutual TLS): without one, no client
  // names anything and every change is refused. Call before the server starts; empty (the
  // default) lets every client that gets through the handshake make every call.
  void RequireWriters(std::vector<std::string> writers);

 private:
  // Whether a call changes reservations (RequireWriters).
  enum class Access { kRead, kWrite };
  // Runs `handler` (a kWrite one only for an authorized client), turning its status (or an
  // escaping exception, as Internal) into the RPC's, marking errors as ours and reporting to the
  // observer.
  ::grpc::Status Serve(std::string_view method, Access access, ::grpc::ServerContext* context,
                       const std::function<absl::Status()>& handler);
  // OK, or PERMISSION_DENIED naming what the client's certificate names.
  absl::Status Authorize(std::string_view method, const ::grpc::ServerContext& context) const;

  PlacementService& service_;
  SummaryFunction summary_;
  RpcObserver observer_;
  std::vector<std::string> writers_;
};

struct PlacementServerOptions {
  // "host:port"; port 0 picks a free port (tests). Binding a port another process already
  // listens on fails: SO_REUSEPORT is off.
  std::string address = "127.0.0.1:0";
  // Largest request accepted; larger ones fail with RESOURCE_EXHAUSTED before any decoding.
  int max_receive_message_bytes = kDefaultMaxMessageBytes;
  // TLS (tls.h, LoadServerTls); nullopt = plain text.
  std::optional<TlsPem> tls;
};

struct RunningPlacementServer {
  std::unique_ptr<::grpc::Server> server;
  int port = 0;  // the bound port (the chosen one when the address asked for 0)
};

// Builds and starts a gRPC server (insecure credentials) serving `service`, which must outlive
// it. Unavailable if the address cannot be bound. Destroying the server shuts it down; call
// server->Shutdown(deadline) first to let running calls finish.
absl::StatusOr<RunningPlacementServer> StartPlacementServer(::grpc::Service& service,
                                                            const PlacementServerOptions& options);

}  // namespace phalanx::placement
