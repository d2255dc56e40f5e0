// No capacity idles while a fitting job waits. Seeded small scenarios (4–12 empty p5 nodes in
// EKS topology, 1–2 ClusterQueues whose quota never binds, up to 6 new jobs a cycle with random
// sizes, priorities, required / preferred levels and elastic ranges) run through the real
// admission core and placement service for several cycles, jobs finishing in between. After
// every cycle an oracle of the test's own (free GPUs per node from the held reservations and
// the jobs' requests; a job fits when some domain of its required level has enough whole pod
// slots) looks at every job left waiting. A job that fits must be explained:
//   - by its locality wait, reported as such ("waiting up to Ns more for one <level> domain"),
//     and then no domain of its preferred level may have room for it (or the wait is a lie);
//   - or by its eviction in this very cycle: victims queue again and are looked at in the next
//     cycle (where the rule applies to them like to any other job). Counted and printed.
// Any other fitting job left waiting is idle capacity the cycle should have used.
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "operator/admission/admission_cycle.h"
#include "scheduler/in_process_placement_service.h"
#include "scheduler/synthetic_cluster.h"
#include "tests/unit/operator/world.h"

namespace phalanx::admission {
namespace {

constexpr int64_t kNodeGpus = 8;

// The test's view of the cluster: each node's labels (read once, as data) and free GPUs.
struct Oracle {
  std::vector<std::map<std::string, std::string>> labels;
  std::vector<std::string> names;
  std::vector<int64_t> free;

  // Free GPUs per node: every node's 8 GPUs minus the held ranks of admitted workloads, at the
  // per-pod GPUs the test gave them.
  void Refresh(const placement::InProcessPlacementService& service, const Snapshot& snapshot) {
    std::map<std::string, int64_t> gpus_of;
    for (const Workload& w : snapshot.workloads) gpus_of[w.key] = w.per_pod.at("nvidia.com/gpu");
    service.Read([&](const placement::ClusterSnapshot& s) {
      if (names.empty()) {
        for (const auto& node : s.nodes()) {
          names.push_back(node.info.name);
          labels.push_back(node.info.labels);
        }
      }
      free.assign(names.size(), kNodeGpus);
      for (const std::string& job : s.ReservedJobs()) {
        for (const auto& rank : s.FindReservation(job)->ranks) free[rank.node] -= gpus_of.at(job);
      }
    });
  }

  // The domain of `level` (a label key, "" = the whole cluster) with room for `count` pods of
  // `gpus` each, or "" if none.
  std::string RoomFor(const std::string& level, int32_t count, int64_t gpus) const {
    std::map<std::string, int64_t> slots;
    for (size_t n = 0; n < names.size(); ++n) {
      std::string key = "cluster";
      if (!level.empty()) {
        auto it = labels[n].find(level);
        if (it == labels[n].end()) continue;
        key = level + "=" + it->second;
      }
      slots[key] += free[n] / gpus;
    }
    for (const auto& [key, pods] : slots) {
      if (pods >= count) return key;
    }
    return "";
  }
};

struct Totals {
  int admitted = 0;
  int preempted = 0;
  int locality_waits = 0;
  int waiting = 0;
  int evicted_fitting = 0;  // victims that would fit elsewhere right after their eviction
  int pass_budget_waits = 0;  // fitting jobs left for the next cycle by max_passes
};

void RunScenario(uint64_t seed, Totals& totals) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  placement::SyntheticClusterOptions options{.topology = "eks", .nodes = pick(4, 12),
                                             .nodes_per_leaf = pick(2, 4), .fanout = pick(1, 2),
                                             .occupancy = 0, .churn = 0, .seed = seed};
  auto cluster = placement::BuildSyntheticCluster(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto service =
      std::make_unique<placement::InProcessPlacementService>(std::move(cluster->snapshot));
  testing::World world(*service);
  world.Flavor("p5");
  const int queues = pick(1, 2);
  for (int q = 0; q < queues; ++q) {
    // Nominal quota = every GPU of the cluster: quota never explains a wait here.
    ClusterQueue cq = testing::GpuQueue("q" + std::to_string(q), "",
                                        {{"p5", testing::Gpu(kNodeGpus * options.nodes)}});
    cq.preemption.within_cluster_queue =
        pick(0, 1) ? WithinClusterQueuePolicy::kLowerPriority : WithinClusterQueuePolicy::kNever;
    cq.locality_wait_seconds = pick(0, 1) ? 300 : 0;
    world.Queue(cq);
  }
  Oracle oracle;
  int serial = 0;
  for (int cycle = 0; cycle < 6; ++cycle) {
    for (int n = pick(0, cycle < 4 ? 6 : 0); n > 0; --n) {
      // One pick per statement: the order of a call's arguments is unspecified (g++ and clang
      // differ), and the scenarios must be the same whichever compiler built the test.
      const int queue = pick(0, queues - 1);
      const int pods = pick(1, 4);
      const int64_t gpus_per_pod = std::vector<int64_t>{1, 2, 4, 8}[pick(0, 3)];
      const int priority = pick(0, 3);
      Workload w = testing::Job(absl::StrCat("q", queue, "/w", ++serial), pods, gpus_per_pod,
                                priority, world.snapshot.now);
      w.required_level = std::vector<std::string>{"", testing::kSpine, testing::kLeaf}[pick(0, 2)];
      if (w.required_level != testing::kLeaf && pick(0, 1)) w.preferred_level = testing::kLeaf;
      if (pick(0, 3) == 0) {
        int32_t min = pick(1, 2);
        w.elastic = placement::ElasticRange{min, min + pick(0, 3), 1};
      }
      world.Add(w);
    }
    CycleResult result = world.Cycle();
    world.Apply(result);
    world.snapshot.now += 100;
    oracle.Refresh(*service, world.snapshot);
    totals.admitted += static_cast<int>(result.admissions.size());
    totals.preempted += static_cast<int>(result.preemptions.size());
    SCOPED_TRACE(absl::StrCat("seed=", seed, " cycle=", cycle, " nodes=", options.nodes,
                              " per leaf=", options.nodes_per_leaf));

    std::set<std::string> evicted;
    for (const PreemptionDecision& p : result.preemptions) {
      if (p.new_count == 0) evicted.insert(p.victim);
    }
    for (const Workload& w : world.snapshot.workloads) {
      if (w.admitted) continue;
      ++totals.waiting;
      const int32_t count = w.elastic ? w.elastic->min : w.count;
      const int64_t gpus = w.per_pod.at("nvidia.com/gpu");
      const std::string room = oracle.RoomFor(w.required_level, count, gpus);
      if (room.empty()) continue;
      const PendingDecision* pending = testing::PendingFor(result, w.key);
      const std::string why = pending != nullptr ? pending->message : "(evicted this cycle)";
      if (evicted.contains(w.key)) {
        ++totals.evicted_fitting;
        continue;
      }
      if (why.find("quota was freed after it was considered") != std::string::npos) {
        // The cycle's pass budget (CycleOptions::max_passes): quota a failed or shrunk
        // placement gave back in the last pass was not offered again this cycle, and the wait
        // says so. Counted and printed; docs/admission.md "Passes" describes the bound.
        ++totals.pass_budget_waits;
        continue;
      }
      if (why.find("waiting up to") != std::string::npos) {
        ++totals.locality_waits;
        EXPECT_EQ(oracle.RoomFor(w.preferred_level, count, gpus), "")
            << w.key << " is held for one " << w.preferred_level
            << " domain, and one has room: " << why;
        continue;
      }
      ADD_FAILURE() << w.key << " (" << count << " pods x " << gpus << " GPUs, required '"
                    << w.required_level << "') fits in " << room << " but waits: " << why;
    }
    // Some running jobs finish.
    std::erase_if(world.snapshot.workloads, [&](const Workload& w) {
      if (!w.admitted || pick(0, 2) != 0) return false;
      EXPECT_TRUE(service->Release(w.key).ok()) << w.key;
      return true;
    });
  }
}

TEST(IdleCapacityTest, NoFittingJobWaitsUnlessItsLocalityWaitSaysSo) {
  Totals totals;
  for (int i = 0; i < 400; ++i) {
    const uint64_t seed = 7000 + static_cast<uint64_t>(i);
    RunScenario(seed, totals);
    if (::testing::Test::HasFailure()) FAIL() << "first failing seed: " << seed;
  }
  std::printf("idle capacity: %d admitted, %d preempted, %d waiting job-cycles, %d locality "
              "waits, %d victims that fit elsewhere in their eviction cycle, %d left to the "
              "next cycle by the pass budget\n",
              totals.admitted, totals.preempted, totals.waiting, totals.locality_waits,
              totals.evicted_fitting, totals.pass_budget_waits);
  // The pass budget is a bound for the rare cycle, not how jobs usually wait.
  EXPECT_LT(totals.pass_budget_waits * 100, totals.waiting);
  // The scenarios exercise waiting, preemption and locality waits, not only empty clusters.
  EXPECT_GT(totals.waiting, 1000);
  EXPECT_GT(totals.preempted, 50);
  // Gangs bigger than every domain of their preferred level no longer wait at all (issue 13,
  // docs/admission.md "Locality"): about half of these scenarios' waits were such, 10 remain.
  EXPECT_GT(totals.locality_waits, 5);
}

}  // namespace
}  // namespace phalanx::admission
