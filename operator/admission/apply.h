// Applies a cycle's decisions to the Snapshot it was computed from, as the operator persists
// them: admitted workloads record their admission, evicted ones become pending again, shrunk
// ones keep fewer pods, grown ones more. The simulator, benchmarks and tests use it to run
// cycle after cycle.
//
//   CycleResult result = RunAdmissionCycle(snapshot, service);
//   ApplyDecisions(result, snapshot);
//   ++snapshot.now;
#pragma once

#include "operator/admission/types.h"

namespace phalanx::admission {

void ApplyDecisions(const CycleResult& result, Snapshot& snapshot);

}  // namespace phalanx::admission
