#include "operator/admission/apply.h"

#include <string_view>
#include <unordered_map>

namespace phalanx::admission {

void ApplyDecisions(const CycleResult& result, Snapshot& snapshot) {
  std::unordered_map<std::string_view, Workload*> by_key;
  for (Workload& w : snapshot.workloads) by_key.emplace(w.key, &w);
  for (const AdmissionDecision& a : result.admissions) {
    if (auto it = by_key.find(a.workload); it != by_key.end()) {
      it->second->admitted = AdmittedState{a.cluster_queue, a.flavors, a.count, a.admission_time};
    }
  }
  for (const PreemptionDecision& p : result.preemptions) {
    auto it = by_key.find(p.victim);
    if (it == by_key.end() || !it->second->admitted) continue;
    if (p.new_count == 0) {
      it->second->admitted.reset();
    } else {
      it->second->admitted->count = p.new_count;
    }
  }
  for (const GrowthDecision& g : result.growths) {
    auto it = by_key.find(g.workload);
    if (it != by_key.end() && it->second->admitted) it->second->admitted->count = g.new_count;
  }
}

}  // namespace phalanx::admission
