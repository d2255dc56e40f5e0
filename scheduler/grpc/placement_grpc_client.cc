#include "scheduler/grpc/placement_grpc_client.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "spdlog/spdlog.h"

namespace phalanx::placement {
namespace {

std::shared_ptr<::grpc::Channel> MakeChannel(const std::string& target,
                                             const GrpcClientOptions& options) {
  ::grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_message_bytes);
  args.SetMaxSendMessageSize(options.max_message_bytes);
  // gRPC's default reconnect backoff grows to 120 s: after a phalanx-scheduler restart of a
  // minute the channel stayed down ~18 s after the server was ready (audit 32). The peer is
  // one service on the cluster network; trying every 2 s at most costs nothing.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 500);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  // Not a backoff in gRPC's C core but each connection attempt's deadline, TLS handshake
  // included (the subchannel's min_connect_timeout): 500 ms ran out in handshakes on a loaded
  // machine ("Handshake timed out"); 2 s still fails calls fast while the server is away. A
  // channel that stops connecting for good is replaced (kReconnectAfter).
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 2000);
  if (options.tls && !options.tls_server_name.empty()) {
    args.SetSslTargetNameOverride(options.tls_server_name);
  }
  return ::grpc::CreateCustomChannel(target, ChannelCredentials(options.tls), args);
}

bool FromService(const ::grpc::ClientContext& context) {
  auto range = context.GetServerTrailingMetadata().equal_range(
      ::grpc::string_ref(kErrorOriginTrailer.data(), kErrorOriginTrailer.size()));
  for (auto it = range.first; it != range.second; ++it) {
    if (it->second == ::grpc::string_ref(kErrorOriginService.data(), kErrorOriginService.size())) {
      return true;
    }
  }
  return false;
}

}  // namespace

// A channel whose calls have failed UNAVAILABLE this long, with at least this long since it
// was made, is replaced. After a phalanx-scheduler restart gRPC 1.51's TLS channel sometimes
// never connects again ("connection attempt timed out before receiving SETTINGS frame" or
// "Handshake timed out" at every attempt, grpc/grpc#33423) while a new channel connects at
// once: nothing was admitted until phalanx-operator was restarted (audit 2026-11-30, D2-1). A
// server that is really down costs a new channel every 10 s, which is nothing.
constexpr absl::Duration kReconnectAfter = absl::Seconds(10);

std::shared_ptr<const GrpcPlacementService::Connection> GrpcPlacementService::Connect(
    const std::string& target, const GrpcClientOptions& options) {
  auto connection = std::make_shared<Connection>();
  connection->channel = MakeChannel(target, options);
  connection->stub = pb::Placement::NewStub(connection->channel);
  return connection;
}

GrpcPlacementService::GrpcPlacementService(std::string target, GrpcClientOptions options)
    : target_(std::move(target)),
      options_(options),
      connection_(Connect(target_, options_)),
      connected_at_(absl::Now()) {}

std::shared_ptr<const GrpcPlacementService::Connection> GrpcPlacementService::Current() const {
  absl::MutexLock lock(&mu_);
  return connection_;
}

std::optional<absl::Time> GrpcPlacementService::UnansweredSince() const {
  absl::MutexLock lock(&mu_);
  return unanswered_since_;
}

void GrpcPlacementService::NoteAnswered() const {
  absl::MutexLock lock(&mu_);
  failing_since_.reset();
  unanswered_since_.reset();
}

void GrpcPlacementService::NoteUnanswered(absl::Time now) const {
  if (!unanswered_since_) unanswered_since_ = now;
}

void GrpcPlacementService::NoteUnavailable(const std::shared_ptr<const Connection>& used) const {
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&mu_);
  NoteUnanswered(now);
  if (used != connection_) return;  // another caller replaced it already
  if (!failing_since_) failing_since_ = now;
  if (now - *failing_since_ < kReconnectAfter || now - connected_at_ < kReconnectAfter) return;
  spdlog::warn(
      "Placement channel to {}: every call has failed UNAVAILABLE for {}s; opening a "
      "new channel",
      target_, absl::ToInt64Seconds(now - *failing_since_));
  connection_ = Connect(target_, options_);
  connected_at_ = now;
  failing_since_.reset();
}

template <typename Request, typename Response>
absl::Status GrpcPlacementService::Call(
    std::string_view method,
    ::grpc::Status (Stub::*rpc)(::grpc::ClientContext*, const Request&, Response*),
    const Request& request, Response* response) const {
  ::grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + options_.deadline);
  const std::shared_ptr<const Connection> connection = Current();
  ::grpc::Status status = (connection->stub.get()->*rpc)(&context, request, response);
  if (status.ok()) {
    NoteAnswered();
    return absl::OkStatus();
  }
  absl::Status error = FromGrpcStatus(status);
  if (FromService(context)) {
    NoteAnswered();
    return error;
  }
  if (status.error_code() == ::grpc::StatusCode::UNAVAILABLE) {
    NoteUnavailable(connection);
  } else if (status.error_code() == ::grpc::StatusCode::DEADLINE_EXCEEDED) {
    absl::MutexLock lock(&mu_);
    NoteUnanswered(absl::Now());
  }
  return absl::Status(error.code(),
                      absl::StrCat("Placement.", std::string(method), " to ", target_, ": ",
                                   status.error_message()));
}

absl::StatusOr<PlacementResult> GrpcPlacementService::Place(const GangRequest& request) const {
  pb::GangRequest wire;
  ToProto(request, &wire);
  pb::PlacementResult reply;
  absl::Status status = Call("Explain", &Stub::Explain, wire, &reply);
  if (!status.ok()) return status;
  return FromProto(reply);
}

absl::StatusOr<StartEstimate> GrpcPlacementService::EstimateStart(
    const GangRequest& request, const std::vector<EndingGang>& ends) const {
  pb::EstimateStartRequest wire;
  ToProto(request, wire.mutable_request());
  wire.mutable_ends()->Reserve(static_cast<int>(ends.size()));
  for (const EndingGang& end : ends) {
    pb::EndingGang* e = wire.add_ends();
    e->set_job(std::string(end.job));
    e->set_end(end.end);
  }
  pb::StartEstimate reply;
  absl::Status status = Call("EstimateStart", &Stub::EstimateStart, wire, &reply);
  if (!status.ok()) return status;
  return FromProto(reply);
}

absl::StatusOr<PlacementResult> GrpcPlacementService::Reserve(const GangRequest& request) {
  return ReserveBatch({request}).front();
}

std::vector<absl::StatusOr<PlacementResult>> GrpcPlacementService::ReserveBatch(
    const std::vector<GangRequest>& requests) {
  pb::ReserveBatchRequest wire;
  wire.mutable_requests()->Reserve(static_cast<int>(requests.size()));
  for (const GangRequest& request : requests) ToProto(request, wire.add_requests());
  pb::ReserveBatchResponse reply;
  absl::Status status = Call("ReserveBatch", &Stub::ReserveBatch, wire, &reply);
  if (status.ok() && static_cast<size_t>(reply.results_size()) != requests.size()) {
    status = absl::InternalError(absl::StrCat("Placement.ReserveBatch to ", target_, ": ",
                                              reply.results_size(), " results for ",
                                              requests.size(), " requests"));
  }
  std::vector<absl::StatusOr<PlacementResult>> results;
  results.reserve(requests.size());
  if (!status.ok()) {
    results.assign(requests.size(), status);
    return results;
  }
  for (const pb::ReserveResult& result : reply.results()) results.push_back(FromProto(result));
  return results;
}

absl::Status GrpcPlacementService::Release(std::string_view job) {
  pb::ReleaseRequest wire;
  wire.set_job(std::string(job));
  pb::ReleaseResponse reply;
  return Call("Release", &Stub::Release, wire, &reply);
}

absl::StatusOr<PlacementResult> GrpcPlacementService::Resize(std::string_view job,
                                                             int32_t new_count) {
  pb::ResizeRequest wire;
  wire.set_job(std::string(job));
  wire.set_new_count(new_count);
  pb::PlacementResult reply;
  absl::Status status = Call("Resize", &Stub::Resize, wire, &reply);
  if (!status.ok()) return status;
  return FromProto(reply);
}

absl::StatusOr<PlacementResult> GrpcPlacementService::ReplaceNodes(
    std::string_view job, const std::vector<std::string>& nodes) {
  pb::ReplaceNodesRequest wire;
  wire.set_job(std::string(job));
  for (const std::string& node : nodes) wire.add_nodes(node);
  pb::PlacementResult reply;
  absl::Status status = Call("ReplaceNodes", &Stub::ReplaceNodes, wire, &reply);
  if (!status.ok()) return status;
  return FromProto(reply);
}

absl::StatusOr<PreemptionPlan> GrpcPlacementService::PlanPreemption(
    const GangRequest& request, const std::vector<RunningGang>& candidates) const {
  pb::PlanPreemptionRequest wire;
  ToProto(request, wire.mutable_request());
  for (const RunningGang& candidate : candidates) ToProto(candidate, wire.add_candidates());
  pb::PreemptionPlan reply;
  absl::Status status = Call("PlanPreemption", &Stub::PlanPreemption, wire, &reply);
  if (!status.ok()) return status;
  return FromProto(reply);
}

absl::StatusOr<std::vector<std::string>> GrpcPlacementService::TopologyLevels() const {
  absl::StatusOr<SnapshotSummary> summary = Snapshot({.max_level = 0, .max_domains = 0});
  if (!summary.ok()) return summary.status();
  return std::move(summary->levels);
}

absl::StatusOr<SnapshotSummary> GrpcPlacementService::Snapshot(
    const SummaryOptions& options) const {
  pb::SnapshotRequest wire;
  ToProto(options, &wire);
  pb::SnapshotSummary reply;
  absl::Status status = Call("Snapshot", &Stub::Snapshot, wire, &reply);
  if (!status.ok()) return status;
  return FromProto(reply);
}

}  // namespace phalanx::placement
