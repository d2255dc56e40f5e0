// A PlacementService test double that counts GPUs per domain: a gang fits a domain when its
// total GPUs fit the domain's free GPUs (nodes, levels and groups are not modelled). Small
// enough to reason about by hand in table-driven tests, and honest about all-or-nothing,
// node selectors, elastic counts and preemption plans, so the admission core can be tested
// before (and independently of) the real placement core.
//
//   FakePlacementService fake({{.name = "block-a", .labels = {{"gpu", "h100"}}, .gpus = 64}});
//   fake.Hold("ns/running", "block-a", 4, 8);   // a gang admitted before the cycle
//   CycleResult result = RunAdmissionCycle(snapshot, fake);
//   EXPECT_EQ(fake.Free("block-a"), 0);
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scheduler/placement_service.h"

namespace phalanx::admission::testing {

struct FakeDomain {
  std::string name;
  std::map<std::string, std::string> labels;
  int64_t gpus = 0;
};

class FakePlacementService : public placement::PlacementService {
 public:
  explicit FakePlacementService(std::vector<FakeDomain> domains);

  // Records `job` as holding `count` pods of `gpus_per_pod` GPUs in `domain`.
  void Hold(const std::string& job, const std::string& domain, int32_t count,
            int64_t gpus_per_pod);
  int64_t Free(std::string_view domain) const;
  bool Holds(std::string_view job) const { return holds_.contains(job); }
  int32_t HeldCount(std::string_view job) const;

  struct Calls {
    int place = 0, estimate_start = 0, reserve = 0, reserve_batch = 0, release = 0, resize = 0, plan = 0;
  };
  const Calls& calls() const { return calls_; }

  absl::StatusOr<placement::PlacementResult> Place(
      const placement::GangRequest& request) const override;
  // As Place, giving the GPUs of the ending gangs' holds back one end time at a time.
  absl::StatusOr<placement::StartEstimate> EstimateStart(
      const placement::GangRequest& request,
      const std::vector<placement::EndingGang>& ends) const override;
  absl::StatusOr<placement::PlacementResult> Reserve(
      const placement::GangRequest& request) override;
  std::vector<absl::StatusOr<placement::PlacementResult>> ReserveBatch(
      const std::vector<placement::GangRequest>& requests) override;
  absl::Status Release(std::string_view job) override;
  absl::StatusOr<placement::PlacementResult> Resize(std::string_view job,
                                                    int32_t new_count) override;
  // Nodes are not modelled: Unimplemented (the admission core never replaces nodes).
  absl::StatusOr<placement::PlacementResult> ReplaceNodes(
      std::string_view job, const std::vector<std::string>& nodes) override;
  absl::StatusOr<placement::PreemptionPlan> PlanPreemption(
      const placement::GangRequest& request,
      const std::vector<placement::RunningGang>& candidates) const override;

 private:
  struct HeldGang {
    int domain = 0;
    int32_t count = 0;
    int64_t gpus_per_pod = 0;
  };
  bool Matches(const placement::GangRequest& request, int domain) const;
  // (domain, count) of the best fit, preferring the largest count, then the fullest domain.
  std::optional<std::pair<int, int32_t>> Fit(const placement::GangRequest& request,
                                             const std::vector<int64_t>& free) const;
  placement::PlacementResult Result(const placement::GangRequest& request,
                                    const std::vector<int64_t>& free) const;
  placement::Placement MakePlacement(const std::string& job, int domain, int32_t count) const;

  std::vector<FakeDomain> domains_;
  std::vector<int64_t> free_;
  std::map<std::string, HeldGang, std::less<>> holds_;
  mutable Calls calls_;
};

}  // namespace phalanx::admission::testing
