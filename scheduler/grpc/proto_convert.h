// Conversions between the placement core's vocabulary (scheduler/placement_types.h,
// scheduler/snapshot_summary.h) and the phalanx.v1alpha1 Placement API messages, and between
// absl and gRPC status codes. Shared by the gRPC server and client adapters.
//
//   pb::GangRequest wire;
//   ToProto(request, &wire);                                    // encoding never fails
//   ASSIGN_OR_RETURN(GangRequest back, DecodeGangRequest(wire, "request"));
//
// Decoding what a peer sent enforces the wire's limits (batch size, pods per gang, string
// lengths, map sizes) so that hostile input cannot make the scheduler allocate without bound;
// a breach is InvalidArgument naming the field: "requests[3].count: 70000 is above the limit of
// 65536". Every semantic check (count >= 1, known levels, min <= max, ...) stays with the
// placement core, so a request that is merely wrong gets the very same error through gRPC as in
// process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/support/status.h"
#include "phalanx/v1alpha1/placement.pb.h"
#include "scheduler/placement_types.h"
#include "scheduler/snapshot_summary.h"

namespace phalanx::placement {

namespace pb = ::phalanx::v1alpha1;

// Limits of the wire (docs/placement-api.md). A request beyond them is refused, not truncated.
inline constexpr int kMaxBatchRequests = 10'000;
inline constexpr int kMaxPodsPerGang = 65'536;   // count, elastic bounds, group_size, new_count,
                                                 // ReplaceNodes' nodes
inline constexpr size_t kMaxStringBytes = 1'024;  // job ids, label keys and values, names
inline constexpr int kMaxMapEntries = 64;         // per_pod, node_selector, tolerations,
                                                  // node_affinity terms and their entries
inline constexpr int kMaxSelectorValues = 1'024;  // values of one node_affinity entry
inline constexpr int kMaxCandidates = 100'000;    // PlanPreemption candidates, EstimateStart ends
inline constexpr int kDefaultSummaryDomains = 1'000;
inline constexpr int kMaxSummaryDomains = 100'000;
// Default largest message either side accepts: a full batch of 10,000 placed gangs fits.
inline constexpr int kDefaultMaxMessageBytes = 64 << 20;

// Trailing metadata the server sets on every error it returns itself: an error without it was
// produced by gRPC (no connection, deadline, message too large), and the client says so.
inline constexpr std::string_view kErrorOriginTrailer = "phalanx-error-origin";
inline constexpr std::string_view kErrorOriginService = "placement-service";

// Status codes, one to one (both follow google.rpc.Code).
::grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const ::grpc::Status& status);
// A canonical code number from the wire; anything outside 0..16 is Unknown.
absl::StatusCode CodeFromInt(int code);

// Encoding: what a caller or the service produced; replaces what `out` held, never fails.
void ToProto(const GangRequest& in, pb::GangRequest* out);
void ToProto(const RunningGang& in, pb::RunningGang* out);
void ToProto(const DomainId& in, pb::DomainId* out);
void ToProto(const Placement& in, pb::GangPlacement* out);
void ToProto(const Explanation& in, pb::Explanation* out);
void ToProto(const PlacementResult& in, pb::PlacementResult* out);
// A result, or an Error for a non-OK status.
void ToProto(const absl::StatusOr<PlacementResult>& in, pb::ReserveResult* out);
void ToProto(const PreemptionPlan& in, pb::PreemptionPlan* out);
void ToProto(const StartEstimate& in, pb::StartEstimate* out);
void ToProto(const SummaryOptions& in, pb::SnapshotRequest* out);
void ToProto(const SnapshotSummary& in, pb::SnapshotSummary* out);

// Decoding requests on the server: limits enforced, `field` names the message in errors
// ("request", "requests[3]", "candidates[0]").
absl::StatusOr<GangRequest> DecodeGangRequest(const pb::GangRequest& in, std::string_view field);
absl::StatusOr<RunningGang> DecodeRunningGang(const pb::RunningGang& in, std::string_view field);

// The outer status refuses the whole batch (too many requests); an inner one refuses one request,
// which then is not passed to the service.
absl::StatusOr<std::vector<absl::StatusOr<GangRequest>>> DecodeReserveBatch(
    const pb::ReserveBatchRequest& in);

absl::StatusOr<std::string> DecodeRelease(const pb::ReleaseRequest& in);

struct ResizeArgs {
  std::string job;
  int32_t new_count = 0;
};
absl::StatusOr<ResizeArgs> DecodeResize(const pb::ResizeRequest& in);

struct ReplaceNodesArgs {
  std::string job;
  std::vector<std::string> nodes;
};
absl::StatusOr<ReplaceNodesArgs> DecodeReplaceNodes(const pb::ReplaceNodesRequest& in);

struct StartQuery {
  GangRequest request;
  std::vector<EndingGang> ends;
};
// The query's ends view the job names in `in`: keep `in` alive while the query is used (a
// temporary would leave them dangling, hence the deleted overload).
absl::StatusOr<StartQuery> DecodeEstimateStart(const pb::EstimateStartRequest& in);
absl::StatusOr<StartQuery> DecodeEstimateStart(pb::EstimateStartRequest&& in) = delete;

struct PreemptionQuery {
  GangRequest request;
  std::vector<RunningGang> candidates;
};
absl::StatusOr<PreemptionQuery> DecodePlanPreemption(const pb::PlanPreemptionRequest& in);

absl::StatusOr<SummaryOptions> DecodeSummaryOptions(const pb::SnapshotRequest& in);

// Decoding replies on the client. The server is trusted to stay within limits (the message size
// bound caps memory); only malformed replies are refused, with Internal.
DomainId FromProto(const pb::DomainId& in);
Placement FromProto(const pb::GangPlacement& in);
Explanation FromProto(const pb::Explanation& in);
PlacementResult FromProto(const pb::PlacementResult& in);
// The result, or the error's status; Internal if the reply sets neither or an error with code 0.
absl::StatusOr<PlacementResult> FromProto(const pb::ReserveResult& in);
PreemptionPlan FromProto(const pb::PreemptionPlan& in);
StartEstimate FromProto(const pb::StartEstimate& in);
SnapshotSummary FromProto(const pb::SnapshotSummary& in);

}  // namespace phalanx::placement
