#include "scheduler/in_process_placement_service.h"

namespace phalanx::placement {

absl::StatusOr<PlacementResult> InProcessPlacementService::Place(
    const GangRequest& request) const {
  absl::MutexLock lock(&mu_);
  return snapshot_.Place(request);
}

absl::StatusOr<StartEstimate> InProcessPlacementService::EstimateStart(
    const GangRequest& request, const std::vector<EndingGang>& ends) const {
  absl::MutexLock lock(&mu_);
  return snapshot_.EstimateStart(request, ends);
}

absl::StatusOr<PlacementResult> InProcessPlacementService::Reserve(const GangRequest& request) {
  absl::MutexLock lock(&mu_);
  return snapshot_.Reserve(request);
}

std::vector<absl::StatusOr<PlacementResult>> InProcessPlacementService::ReserveBatch(
    const std::vector<GangRequest>& requests) {
  absl::MutexLock lock(&mu_);
  std::vector<absl::StatusOr<PlacementResult>> results;
  results.reserve(requests.size());
  for (const GangRequest& request : requests) results.push_back(snapshot_.Reserve(request));
  return results;
}

absl::Status InProcessPlacementService::Release(std::string_view job) {
  absl::MutexLock lock(&mu_);
  return snapshot_.Release(job);
}

absl::StatusOr<PlacementResult> InProcessPlacementService::Resize(std::string_view job,
                                                                  int32_t new_count) {
  absl::MutexLock lock(&mu_);
  return snapshot_.Resize(job, new_count);
}

absl::StatusOr<PlacementResult> InProcessPlacementService::ReplaceNodes(
    std::string_view job, const std::vector<std::string>& nodes) {
  absl::MutexLock lock(&mu_);
  return snapshot_.ReplaceNodes(job, nodes);
}

absl::StatusOr<PreemptionPlan> InProcessPlacementService::PlanPreemption(
    const GangRequest& request, const std::vector<RunningGang>& candidates) const {
  absl::MutexLock lock(&mu_);
  return snapshot_.PlanPreemption(request, candidates);
}

absl::StatusOr<std::vector<std::string>> InProcessPlacementService::TopologyLevels() const {
  absl::MutexLock lock(&mu_);
  return snapshot_.topology().levels();
}

absl::Status InProcessPlacementService::Update(
    const std::function<absl::Status(ClusterSnapshot&)>& change) {
  absl::MutexLock lock(&mu_);
  return change(snapshot_);
}

void InProcessPlacementService::Read(
    const std::function<void(const ClusterSnapshot&)>& read) const {
  absl::MutexLock lock(&mu_);
  read(snapshot_);
}

}  // namespace phalanx::placement
