// Fuzzes the Placement gRPC API's request handling (scheduler/grpc/): the input is a sequence of
// (method, serialized request) pairs; each request that protobuf parses is handed to the real
// PlacementGrpcService handler (wire limits of proto_convert.h, then the placement core) over a
// small synthetic cluster, so a sequence can reserve, resize, replace and release. The gRPC
// runtime (sockets, HTTP/2 framing) is not in the loop: Debian's libgrpc is not instrumented,
// and its message parsing is protobuf's, which this target calls.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "grpcpp/server_context.h"
#include "scheduler/grpc/placement_grpc_server.h"
#include "scheduler/in_process_placement_service.h"
#include "scheduler/snapshot_summary.h"
#include "scheduler/synthetic_cluster.h"

namespace {

using namespace phalanx::placement;

const ClusterSnapshot& BaseSnapshot() {
  static const ClusterSnapshot* snapshot = [] {
    SyntheticClusterOptions options;
    options.nodes = 64;
    options.nodes_per_leaf = 4;
    options.occupancy = 0.3;
    absl::StatusOr<SyntheticCluster> cluster = BuildSyntheticCluster(options);
    if (!cluster.ok()) abort();
    return new ClusterSnapshot(std::move(cluster->snapshot));
  }();
  return *snapshot;
}

template <typename Request, typename Response, typename Method>
void Call(PlacementGrpcService& grpc_service, const std::string& bytes, Method method) {
  Request request;
  if (!request.ParseFromString(bytes)) return;
  Response response;
  ::grpc::ServerContext context;
  ::grpc::Status status = (grpc_service.*method)(&context, &request, &response);
  if (!status.ok() && status.error_message().empty()) abort();  // every refusal says why
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  InProcessPlacementService service(BaseSnapshot());
  PlacementGrpcService grpc_service(service, [&](const SummaryOptions& options) {
    SnapshotSummary summary;
    service.Read([&](const ClusterSnapshot& snap) { summary = Summarize(snap, options); });
    return summary;
  });
  FuzzedDataProvider in(data, size);
  for (int calls = 0; calls < 8 && in.remaining_bytes() > 0; ++calls) {
    uint8_t method = in.ConsumeIntegral<uint8_t>();
    std::string bytes = in.ConsumeRandomLengthString(4096);
    switch (method % 8) {
      case 0:
        Call<pb::ReserveBatchRequest, pb::ReserveBatchResponse>(
            grpc_service, bytes, &PlacementGrpcService::ReserveBatch);
        break;
      case 1:
        Call<pb::ReleaseRequest, pb::ReleaseResponse>(grpc_service, bytes,
                                                      &PlacementGrpcService::Release);
        break;
      case 2:
        Call<pb::ResizeRequest, pb::PlacementResult>(grpc_service, bytes,
                                                     &PlacementGrpcService::Resize);
        break;
      case 3:
        Call<pb::ReplaceNodesRequest, pb::PlacementResult>(grpc_service, bytes,
                                                           &PlacementGrpcService::ReplaceNodes);
        break;
      case 4:
        Call<pb::PlanPreemptionRequest, pb::PreemptionPlan>(
            grpc_service, bytes, &PlacementGrpcService::PlanPreemption);
        break;
      case 5:
        Call<pb::GangRequest, pb::PlacementResult>(grpc_service, bytes,
                                                   &PlacementGrpcService::Explain);
        break;
      case 6:
        Call<pb::SnapshotRequest, pb::SnapshotSummary>(grpc_service, bytes,
                                                       &PlacementGrpcService::Snapshot);
        break;
      default:
        Call<pb::EstimateStartRequest, pb::StartEstimate>(grpc_service, bytes,
                                                          &PlacementGrpcService::EstimateStart);
        break;
    }
  }
  return 0;
}
