// InProcessPlacementService: the PlacementService over a ClusterSnapshot owned in this process,
// used by the simulator, the tests and (behind the gRPC server) phalanx-scheduler.
//
//   InProcessPlacementService service(std::move(snapshot));
//   service.Update([](ClusterSnapshot& s) { return s.AddPod(pod); });  // informer events
//   ASSIGN_OR_RETURN(PlacementResult result, service.Reserve(request));
//
// Thread-safe: every call holds one mutex, so informer updates and admission calls interleave
// cleanly; a ReserveBatch is atomic with respect to other calls.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "scheduler/cluster_snapshot.h"
#include "scheduler/placement_service.h"

namespace phalanx::placement {

class InProcessPlacementService : public PlacementService {
 public:
  explicit InProcessPlacementService(ClusterSnapshot snapshot) : snapshot_(std::move(snapshot)) {}

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
  absl::StatusOr<std::vector<std::string>> TopologyLevels() const override;

  // Runs `change` on the snapshot under the lock (node and pod events, Restore).
  absl::Status Update(const std::function<absl::Status(ClusterSnapshot&)>& change);
  // Runs `read` on the snapshot under the lock.
  void Read(const std::function<void(const ClusterSnapshot&)>& read) const;

 private:
  mutable absl::Mutex mu_;
  ClusterSnapshot snapshot_ ABSL_GUARDED_BY(mu_);
};

}  // namespace phalanx::placement
