// gMock twin of phalanx::placement::PlacementService, for unit tests of its callers.
#pragma once

#include "gmock/gmock.h"
#include "scheduler/placement_service.h"

namespace phalanx::placement {

class MockPlacementService : public PlacementService {
 public:
  MOCK_METHOD(absl::StatusOr<PlacementResult>, Place, (const GangRequest&), (const, override));
  MOCK_METHOD(absl::StatusOr<StartEstimate>, EstimateStart,
              (const GangRequest&, const std::vector<EndingGang>&), (const, override));
  MOCK_METHOD(absl::StatusOr<PlacementResult>, Reserve, (const GangRequest&), (override));
  MOCK_METHOD(std::vector<absl::StatusOr<PlacementResult>>, ReserveBatch,
              (const std::vector<GangRequest>&), (override));
  MOCK_METHOD(absl::Status, Release, (std::string_view), (override));
  MOCK_METHOD(absl::StatusOr<PlacementResult>, Resize, (std::string_view, int32_t), (override));
  MOCK_METHOD(absl::StatusOr<PlacementResult>, ReplaceNodes,
              (std::string_view, const std::vector<std::string>&), (override));
  MOCK_METHOD(absl::StatusOr<PreemptionPlan>, PlanPreemption,
              (const GangRequest&, const std::vector<RunningGang>&), (const, override));
};

}  // namespace phalanx::placement
