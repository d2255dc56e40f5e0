// GrpcPlacementService: the PlacementService interface over the phalanx.v1alpha1.Placement gRPC
// API, for phalanx-operator and the CLI. A caller cannot tell it from the in-process service:
// results and errors (code and message) are the same; only failures of the connection itself
// are new, and they name the target.
//
//   GrpcPlacementService placement("dns:///phalanx-scheduler.phalanx-system:9443",
//                                  {.deadline = std::chrono::seconds(5)});
//   std::vector<absl::StatusOr<PlacementResult>> results = placement.ReserveBatch(candidates);
//   ASSIGN_OR_RETURN(SnapshotSummary summary, placement.Snapshot({.max_level = 2}));
//
// Mapping: Place -> Explain, Reserve -> a one-element ReserveBatch, the rest one to one. If an
// RPC fails as a whole (server down, deadline, a batch over the limit), every result of a
// ReserveBatch carries that error. The channel connects lazily and reconnects by itself; calls
// fail fast (UNAVAILABLE) while the server is unreachable instead of waiting for the deadline.
// Calls that have failed UNAVAILABLE for 10 s get a new channel (gRPC's TLS channel can stay
// unable to connect to a restarted server for good). UnansweredSince() says since when no call
// has been answered (phalanx-operator's phalanx_placement_unanswered_since_timestamp_seconds).
// Plain text unless GrpcClientOptions::tls is set (tls.h).
//
// Thread-safe: gRPC stubs may be shared by concurrent callers.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "phalanx/v1alpha1/placement.grpc.pb.h"
#include "scheduler/grpc/proto_convert.h"
#include "scheduler/grpc/tls.h"
#include "scheduler/placement_service.h"
#include "scheduler/snapshot_summary.h"

namespace phalanx::placement {

struct GrpcClientOptions {
  // Per call; an RPC still running then fails with DEADLINE_EXCEEDED naming the target.
  std::chrono::milliseconds deadline = std::chrono::seconds(10);
  // Largest message sent or received.
  int max_message_bytes = kDefaultMaxMessageBytes;
  // TLS (tls.h, LoadClientTls); nullopt = plain text.
  std::optional<TlsPem> tls;
  // With TLS, the name the server's certificate must carry when it is not the target's host,
  // e.g. the Service's DNS name when the target is a port-forward on 127.0.0.1.
  std::string tls_server_name;
};

class GrpcPlacementService : public PlacementService {
 public:
  // `target` is a gRPC target: "127.0.0.1:9443", "dns:///phalanx-scheduler:9443".
  explicit GrpcPlacementService(std::string target, GrpcClientOptions options = {});

  absl::StatusOr<PlacementResult> Place(const GangRequest& request) const override;
  absl::StatusOr<StartEstimate> EstimateStart(const GangRequest& request,
                                              const std::vector<EndingGang>& ends) const override;
  absl::StatusOr<PlacementResult> Reserve(const GangRequest& request) override;
  std::vector<absl::StatusOr<PlacementResult>> ReserveBatch(
      const std::vector<GangRequest>& requests) override;
  absl::Status Release(std::string_view job) override;
  absl::StatusOr<PlacementResult> Resize(std::string_view job, int32_t new_count) override;
  absl::StatusOr<PlacementResult> ReplaceNodes(std::string_view job,
                                               const std::vector<std::string>& nodes) override;
  absl::StatusOr<PreemptionPlan> PlanPreemption(
      const GangRequest& request, const std::vector<RunningGang>& candidates) const override;
  // From the Snapshot RPC, listing no domain (the counts are cheap; no new RPC was needed).
  absl::StatusOr<std::vector<std::string>> TopologyLevels() const override;

  // The scheduler's snapshot summary (not part of PlacementService: only the CLI needs it).
  absl::StatusOr<SnapshotSummary> Snapshot(const SummaryOptions& options) const;

  const std::string& target() const { return target_; }

  // Since when every call has ended without an answer from the service (UNAVAILABLE: server
  // down, refused, TLS handshake failed; or the deadline passed), across channel replacements;
  // nullopt before the first call and once a call is answered, with a result or with an error
  // the service sent.
  std::optional<absl::Time> UnansweredSince() const;

 private:
  using Stub = pb::Placement::Stub;
  // One unary call with the deadline; maps the status back to absl, annotating errors that did
  // not come from the service with the method and the target.
  template <typename Request, typename Response>
  absl::Status Call(std::string_view method,
                    ::grpc::Status (Stub::*rpc)(::grpc::ClientContext*, const Request&,
                                                Response*),
                    const Request& request, Response* response) const;

  // A channel and its stub, replaced whole (Reconnect).
  struct Connection {
    std::shared_ptr<::grpc::Channel> channel;
    std::unique_ptr<Stub> stub;
  };
  static std::shared_ptr<const Connection> Connect(const std::string& target,
                                                   const GrpcClientOptions& options);
  std::shared_ptr<const Connection> Current() const;
  // After a call through `used` failed UNAVAILABLE: once calls have failed so for
  // kReconnectAfter, a new channel with new credentials replaces it (see the .cc).
  void NoteUnavailable(const std::shared_ptr<const Connection>& used) const;
  void NoteAnswered() const;
  void NoteUnanswered(absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::string target_;
  GrpcClientOptions options_;
  mutable absl::Mutex mu_;
  mutable std::shared_ptr<const Connection> connection_ ABSL_GUARDED_BY(mu_);
  // Since when every call has failed UNAVAILABLE; nullopt while calls succeed.
  mutable std::optional<absl::Time> failing_since_ ABSL_GUARDED_BY(mu_);
  // Since when no call has been answered (UnansweredSince); not reset by a new channel.
  mutable std::optional<absl::Time> unanswered_since_ ABSL_GUARDED_BY(mu_);
  mutable absl::Time connected_at_ ABSL_GUARDED_BY(mu_);
};

}  // namespace phalanx::placement
