#include "scheduler/grpc/placement_grpc_server.h"

#include <chrono>
#include <exception>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "grpc/grpc_security_constants.h"
#include "grpcpp/security/auth_context.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"

namespace phalanx::placement {

PlacementGrpcService::PlacementGrpcService(PlacementService& service, SummaryFunction summary,
                                           RpcObserver observer)
    : service_(service), summary_(std::move(summary)), observer_(std::move(observer)) {}

void PlacementGrpcService::RequireWriters(std::vector<std::string> writers) {
  writers_ = std::move(writers);
}

absl::Status PlacementGrpcService::Authorize(std::string_view method,
                                             const ::grpc::ServerContext& context) const {
  std::vector<std::string> names;
  if (std::shared_ptr<const ::grpc::AuthContext> auth = context.auth_context()) {
    for (const char* property : {GRPC_X509_CN_PROPERTY_NAME, GRPC_X509_SAN_PROPERTY_NAME}) {
      for (const ::grpc::string_ref& value : auth->FindPropertyValues(property)) {
        std::string name(value.data(), value.size());
        if (absl::c_linear_search(writers_, name)) return absl::OkStatus();
        if (!absl::c_linear_search(names, name)) names.push_back(std::move(name));
      }
    }
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "Placement.", std::string(method),
      " changes reservations and is served only to a client certificate "
      "naming one of --grpc-tls-writers (", absl::StrJoin(writers_, ", "), "); this client ",
      names.empty() ? "presented none"
                    : absl::StrCat("presented one naming ", absl::StrJoin(names, ", ")),
      ". It may still read: Snapshot, Explain, PlanPreemption, EstimateStart"));
}

::grpc::Status PlacementGrpcService::Serve(std::string_view method, Access access,
                                           ::grpc::ServerContext* context,
                                           const std::function<absl::Status()>& handler) {
  const auto start = std::chrono::steady_clock::now();
  absl::Status status;
  try {
    status = access == Access::kWrite && !writers_.empty() ? Authorize(method, *context)
                                                            : absl::OkStatus();
    if (status.ok()) status = handler();
  } catch (const std::exception& e) {
    status = absl::InternalError(absl::StrCat("Placement.", std::string(method), ": ", e.what()));
  } catch (...) {
    status = absl::InternalError(absl::StrCat("Placement.", std::string(method), " failed"));
  }
  if (!status.ok()) {
    context->AddTrailingMetadata(std::string(kErrorOriginTrailer),
                                 std::string(kErrorOriginService));
  }
  if (observer_) {
    std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
    observer_(method, seconds.count(), status.code());
  }
  return ToGrpcStatus(status);
}

::grpc::Status PlacementGrpcService::ReserveBatch(::grpc::ServerContext* context,
                                                  const pb::ReserveBatchRequest* in,
                                                  pb::ReserveBatchResponse* out) {
  return Serve("ReserveBatch", Access::kWrite, context, [&]() -> absl::Status {
    ASSIGN_OR_RETURN(std::vector<absl::StatusOr<GangRequest>> decoded, DecodeReserveBatch(*in));
    // Requests refused by the wire limits hold nothing, so leaving them out of the batch keeps
    // the order semantics of the rest; their errors are put back in place below.
    std::vector<GangRequest> valid;
    valid.reserve(decoded.size());
    for (absl::StatusOr<GangRequest>& request : decoded) {
      if (request.ok()) valid.push_back(std::move(*request));
    }
    std::vector<absl::StatusOr<PlacementResult>> results = service_.ReserveBatch(valid);
    if (results.size() != valid.size()) {
      return absl::InternalError(absl::StrCat("the placement service answered ", results.size(),
                                              " results for ", valid.size(), " requests"));
    }
    size_t next = 0;
    for (const absl::StatusOr<GangRequest>& request : decoded) {
      pb::ReserveResult* result = out->add_results();
      if (request.ok()) {
        ToProto(results[next++], result);
      } else {
        ToProto(absl::StatusOr<PlacementResult>(request.status()), result);
      }
    }
    return absl::OkStatus();
  });
}

::grpc::Status PlacementGrpcService::Release(::grpc::ServerContext* context,
                                             const pb::ReleaseRequest* in,
                                             pb::ReleaseResponse* /*out*/) {
  return Serve("Release", Access::kWrite, context, [&]() -> absl::Status {
    ASSIGN_OR_RETURN(std::string job, DecodeRelease(*in));
    return service_.Release(job);
  });
}

::grpc::Status PlacementGrpcService::Resize(::grpc::ServerContext* context,
                                            const pb::ResizeRequest* in,
                                            pb::PlacementResult* out) {
  return Serve("Resize", Access::kWrite, context, [&]() -> absl::Status {
    ASSIGN_OR_RETURN(ResizeArgs args, DecodeResize(*in));
    ASSIGN_OR_RETURN(PlacementResult result, service_.Resize(args.job, args.new_count));
    ToProto(result, out);
    return absl::OkStatus();
  });
}

::grpc::Status PlacementGrpcService::ReplaceNodes(::grpc::ServerContext* context,
                                                  const pb::ReplaceNodesRequest* in,
                                                  pb::PlacementResult* out) {
  return Serve("ReplaceNodes", Access::kWrite, context, [&]() -> absl::Status {
    ASSIGN_OR_RETURN(ReplaceNodesArgs args, DecodeReplaceNodes(*in));
    ASSIGN_OR_RETURN(PlacementResult result, service_.ReplaceNodes(args.job, args.nodes));
    ToProto(result, out);
    return absl::OkStatus();
  });
}

::grpc::Status PlacementGrpcService::PlanPreemption(::grpc::ServerContext* context,
                                                    const pb::PlanPreemptionRequest* in,
                                                    pb::PreemptionPlan* out) {
  return Serve("PlanPreemption", Access::kRead, context, [&]() -> absl::Status {
    ASSIGN_OR_RETURN(PreemptionQuery query, DecodePlanPreemption(*in));
    ASSIGN_OR_RETURN(PreemptionPlan plan, service_.PlanPreemption(query.request, query.candidates));
    ToProto(plan, out);
    return absl::OkStatus();
  });
}

::grpc::Status PlacementGrpcService::Explain(::grpc::ServerContext* context,
                                             const pb::GangRequest* in,
                                             pb::PlacementResult* out) {
  return Serve("Explain", Access::kRead, context, [&]() -> absl::Status {
    ASSIGN_OR_RETURN(GangRequest request, DecodeGangRequest(*in, "request"));
    ASSIGN_OR_RETURN(PlacementResult result, service_.Place(request));
    ToProto(result, out);
    return absl::OkStatus();
  });
}

::grpc::Status PlacementGrpcService::EstimateStart(::grpc::ServerContext* context,
                                                   const pb::EstimateStartRequest* in,
                                                   pb::StartEstimate* out) {
  return Serve("EstimateStart", Access::kRead, context, [&]() -> absl::Status {
    ASSIGN_OR_RETURN(StartQuery query, DecodeEstimateStart(*in));
    ASSIGN_OR_RETURN(StartEstimate estimate, service_.EstimateStart(query.request, query.ends));
    ToProto(estimate, out);
    return absl::OkStatus();
  });
}

::grpc::Status PlacementGrpcService::Snapshot(::grpc::ServerContext* context,
                                              const pb::SnapshotRequest* in,
                                              pb::SnapshotSummary* out) {
  return Serve("Snapshot", Access::kRead, context, [&]() -> absl::Status {
    if (!summary_) return absl::UnimplementedError("this server has no snapshot summary");
    ASSIGN_OR_RETURN(SummaryOptions options, DecodeSummaryOptions(*in));
    ToProto(summary_(options), out);
    return absl::OkStatus();
  });
}

absl::StatusOr<RunningPlacementServer> StartPlacementServer(
    ::grpc::Service& service, const PlacementServerOptions& options) {
  if (options.max_receive_message_bytes <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("max_receive_message_bytes (",
                                                   options.max_receive_message_bytes,
                                                   ") must be positive"));
  }
  RunningPlacementServer running;
  ::grpc::ServerBuilder builder;
  // gRPC sets SO_REUSEPORT by default: a second scheduler on the same port would then share it
  // silently instead of failing to start.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(options.address, ServerCredentials(options.tls), &running.port);
  builder.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
  builder.RegisterService(&service);
  running.server = builder.BuildAndStart();
  if (running.server == nullptr || running.port == 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot serve the Placement API on ", options.address,
        options.tls ? " (address malformed, the port in use, or the TLS key does not match the "
                      "certificate)"
                    : " (address malformed, or the port is in use)"));
  }
  return running;
}

}  // namespace phalanx::placement
