// PlacementService: the one interface through which the admission core, the simulator and the
// operator ask the placement core where a gang goes. In-process implementation:
// scheduler/in_process_placement_service.h; the operator will use a gRPC client of the same
// interface; tests use tests/mocks/scheduler/mock_placement_service.h.
//
// Contract for every method: bad input (zero or negative count, min > max, unknown level,
// negative resources) is InvalidArgument with a message naming the field; "does not fit" is not
// an error but a result with placed == false and an Explanation. Every mutation is atomic.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "scheduler/placement_types.h"

namespace phalanx::placement {

class PlacementService {
 public:
  virtual ~PlacementService() = default;

  // Dry run: where would `request` go now? Holds nothing.
  virtual absl::StatusOr<PlacementResult> Place(const GangRequest& request) const = 0;

  // When `request`, which may not fit now, would fit as the `ends` gangs end, earliest end
  // first (gangs with equal ends go together), and where it would go then: the fewest ends
  // after which it fits in one domain of its required level. Names holding no reservation are
  // ignored; an empty name is InvalidArgument. Holds and changes nothing. Backfill's start-time
  // reservation asks this (docs/admission.md, "Backfill").
  virtual absl::StatusOr<StartEstimate> EstimateStart(
      const GangRequest& request, const std::vector<EndingGang>& ends) const = 0;

  // Places and holds the whole gang (elastic: the largest feasible count), or holds nothing.
  // AlreadyExists if `request.job` already holds a reservation.
  virtual absl::StatusOr<PlacementResult> Reserve(const GangRequest& request) = 0;

  // Reserve for each request in order; later requests see earlier reservations. One result per
  // request. This is one round trip per admission cycle when the service is remote.
  virtual std::vector<absl::StatusOr<PlacementResult>> ReserveBatch(
      const std::vector<GangRequest>& requests) = 0;

  // Frees a job's reservation. Pods bound to its slots stop counting at once (their owner is
  // deleting them; kube-scheduler binds nothing in their room until they are gone), so a gang
  // reserved right after can take it. InvalidArgument for an empty job; NotFound if it holds
  // none.
  virtual absl::Status Release(std::string_view job) = 0;

  // Grows (near existing ranks) or shrinks (from the highest ranks) a reservation to
  // `new_count` pods; all or nothing. The dropped ranks' pods stop counting, as for Release.
  // The result's placement lists every rank after the change. An elastic reservation may grow
  // past the elastic.max it was reserved with (that bounded the first placement only) but never
  // shrink below elastic.min. InvalidArgument for an empty job
  // or a new_count below 1 (checked before the job is looked up); NotFound if it holds none.
  virtual absl::StatusOr<PlacementResult> Resize(std::string_view job, int32_t new_count) = 0;

  // Moves the ranks of `job`'s reservation that sit on any of `nodes` (nodes that failed) to
  // healthy free nodes, all or nothing, leaving every other rank where it is; the named nodes
  // are never targets. Each rank lands as close to its old node as possible: the old node's
  // tightest domain first, widening only up to the gang's required level (and a rank whose
  // group keeps members stays in the group's domain). Bound pods of the gang whose rank a
  // shrink dropped count as gone (their owner is deleting them), so after Resize down a lost
  // lower rank can take a freed node and ranks stay dense. The result lists every rank after the
  // change, or placed == false with an explanation (nothing changed). If no rank sits on the
  // named nodes the reservation is returned unchanged, so repeating a call is harmless.
  // InvalidArgument for an empty job, list or name (checked first); NotFound if the job holds no
  // reservation.
  virtual absl::StatusOr<PlacementResult> ReplaceNodes(std::string_view job,
                                                       const std::vector<std::string>& nodes) = 0;

  // The fewest victims among `candidates` (shrinking elastic gangs before evicting) after whose
  // removal `request` fits in one domain of its required level. Never picks a candidate whose
  // priority is >= request.priority. Holds and changes nothing.
  virtual absl::StatusOr<PreemptionPlan> PlanPreemption(
      const GangRequest& request, const std::vector<RunningGang>& candidates) const = 0;

  // The topology's label levels, coarsest first ("kubernetes.io/hostname" is the implicit
  // last): a request naming any other level is InvalidArgument. Lets a caller tell a job's
  // unknown level apart before it asks for quota. Unimplemented by default (callers then
  // learn of an unknown level from the InvalidArgument alone).
  virtual absl::StatusOr<std::vector<std::string>> TopologyLevels() const {
    return absl::UnimplementedError("TopologyLevels");
  }
};

}  // namespace phalanx::placement
