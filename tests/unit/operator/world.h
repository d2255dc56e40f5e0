// Builders for admission tests: a small Snapshot with GPU ClusterQueues, one LocalQueue
// "<cq>/main" per queue, and helpers that apply a cycle's decisions back to the snapshot so a
// test can run many cycles like the operator would.
//
//   FakePlacementService fake({{.name = "b1", .gpus = 64}});
//   World world(fake);
//   world.Flavor("h100").Queue(GpuQueue("team-a", "", {{"h100", Gpu(32)}}));
//   world.Add(Job("team-a/big", 4, 8));
//   CycleResult result = world.Cycle();
//   EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-a/big"));
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "operator/admission/admission_cycle.h"
#include "operator/admission/apply.h"
#include "operator/admission/types.h"
#include "scheduler/placement_service.h"

namespace phalanx::admission::testing {

// EKS topology levels the tests place at.
inline const std::string kLeaf = "topology.k8s.aws/network-node-layer-3";
inline const std::string kSpine = "topology.k8s.aws/network-node-layer-2";

inline ResourceQuota Gpu(int64_t nominal, std::optional<int64_t> borrowing_limit = std::nullopt,
                         std::optional<int64_t> lending_limit = std::nullopt) {
  return {std::string(kResourceGpu), nominal, borrowing_limit, lending_limit};
}

// A ClusterQueue with one resource group covering nvidia.com/gpu; flavors in preference order.
inline ClusterQueue GpuQueue(std::string name, std::string cohort,
                             std::vector<std::pair<std::string, ResourceQuota>> flavors) {
  ClusterQueue cq;
  cq.name = std::move(name);
  cq.cohort = std::move(cohort);
  ResourceGroup group{.covered_resources = {std::string(kResourceGpu)}};
  for (auto& [flavor, quota] : flavors) group.flavors.push_back({flavor, {quota}});
  cq.resource_groups.push_back(std::move(group));
  return cq;
}

// A pending job "namespace/name" in LocalQueue "main" of its namespace: `count` pods of `gpus`.
inline Workload Job(std::string key, int32_t count, int64_t gpus, int32_t priority = 0,
                    int64_t created = 0) {
  Workload w;
  w.namespace_name = key.substr(0, key.find('/'));
  w.key = std::move(key);
  w.queue_name = "main";
  w.count = count;
  w.per_pod = {{std::string(kResourceGpu), gpus}};
  w.priority = priority;
  w.creation_time = created;
  return w;
}

class World {
 public:
  explicit World(placement::PlacementService& service) : service_(service) {}

  World& Flavor(std::string name, std::map<std::string, std::string> labels = {}) {
    snapshot.flavors.push_back({.name = std::move(name), .node_labels = std::move(labels)});
    return *this;
  }
  // Adds the queue and a LocalQueue "<name>/main" pointing at it.
  World& Queue(ClusterQueue cq) {
    snapshot.local_queues.push_back({cq.name, "main", cq.name});
    snapshot.cluster_queues.push_back(std::move(cq));
    return *this;
  }
  World& Add(Workload w) {
    snapshot.workloads.push_back(std::move(w));
    return *this;
  }
  // Adds `w` as already admitted to `cq` in `flavor` (for every resource it requests).
  World& Admitted(Workload w, const std::string& cq, const std::string& flavor, int64_t when = 0) {
    AdmittedState state{cq, {}, w.elastic ? w.elastic->max : w.count, when};
    for (const auto& [resource, amount] : w.per_pod) state.flavors[resource] = flavor;
    w.admitted = std::move(state);
    return Add(std::move(w));
  }

  // Admitted(), and the job's pods held in `domain` of a FakePlacementService-like `fake`.
  template <typename Fake>
  World& Running(Fake& fake, const std::string& domain, Workload w, const std::string& cq,
                 const std::string& flavor, int64_t when = 0) {
    fake.Hold(w.key, domain, w.elastic ? w.elastic->max : w.count,
              w.per_pod.at(std::string(kResourceGpu)));
    return Admitted(std::move(w), cq, flavor, when);
  }

  Workload* Find(std::string_view key) {
    for (Workload& w : snapshot.workloads) {
      if (w.key == key) return &w;
    }
    return nullptr;
  }

  CycleResult Cycle(const CycleOptions& options = {}) {
    return RunAdmissionCycle(snapshot, service_, options);
  }

  // Adds `jobs`, runs a cycle that must admit every one of them and applies it (time advances
  // by one): the running jobs a test starts from.
  World& Start(std::vector<Workload> jobs) {
    const size_t count = jobs.size();
    for (Workload& w : jobs) Add(std::move(w));
    CycleResult setup = Cycle();
    EXPECT_EQ(setup.admissions.size(), count) << "a starting job was not admitted";
    Apply(setup);
    return *this;
  }

  // What the operator does with a cycle's decisions: admitted workloads record their admission,
  // evicted ones go back to pending, shrunk ones keep fewer pods. Time advances by one.
  void Apply(const CycleResult& result) {
    ApplyDecisions(result, snapshot);
    ++snapshot.now;
  }

  Snapshot snapshot;

 private:
  placement::PlacementService& service_;
};

inline std::vector<std::string> AdmittedKeys(const CycleResult& result) {
  std::vector<std::string> keys;
  for (const AdmissionDecision& a : result.admissions) keys.push_back(a.workload);
  return keys;
}

inline std::vector<std::string> PendingKeys(const CycleResult& result) {
  std::vector<std::string> keys;
  for (const PendingDecision& p : result.pending) keys.push_back(p.workload);
  return keys;
}

inline const PendingDecision* PendingFor(const CycleResult& result, std::string_view key) {
  for (const PendingDecision& p : result.pending) {
    if (p.workload == key) return &p;
  }
  return nullptr;
}

inline const AdmissionDecision* AdmissionFor(const CycleResult& result, std::string_view key) {
  for (const AdmissionDecision& a : result.admissions) {
    if (a.workload == key) return &a;
  }
  return nullptr;
}

}  // namespace phalanx::admission::testing
