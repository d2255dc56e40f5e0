// CycleCache must never change a decision: the same seeded scenarios run with and without it
// (and with Workload::revision set or not), and every cycle's decisions are compared in full.
// Between cycles the scenarios also reorder the ClusterQueues, which renumbers every queue and
// flavor-resource index the cache holds, change priority-class values, rotate the workload list
// (the cache's hints are by position) and name one workload twice.
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "operator/admission/admission_cycle.h"
#include "tests/unit/operator/fake_placement_service.h"
#include "tests/unit/operator/random_scenario.h"
#include "tests/unit/operator/world.h"

namespace phalanx::admission {
namespace {

using testing::FakePlacementService;
using testing::Gpu;
using testing::GpuQueue;
using testing::Job;
using testing::Scenario;
using testing::World;

enum class Mode { kNoCache, kCache, kCacheWithRevisions };

std::string Digest(const CycleResult& r) {
  std::vector<std::string> lines;
  for (const AdmissionDecision& a : r.admissions) {
    lines.push_back(absl::StrCat("admit ", a.workload, " ", a.cluster_queue, " ", a.count, " ",
                                 absl::StrJoin(a.placement.nodes, ","), " ", a.borrowing));
  }
  for (const PreemptionDecision& p : r.preemptions) {
    const std::string_view reason = ToString(p.reason);
    lines.push_back(absl::StrCat("preempt ", p.victim, " ", p.new_count, " by ", p.preemptor, " ",
                                 absl::string_view(reason.data(), reason.size()), " ",
                                 p.message));
  }
  for (const GrowthDecision& g : r.growths) {
    lines.push_back(absl::StrCat("grow ", g.workload, " ", g.old_count, "->", g.new_count));
  }
  for (const PendingDecision& p : r.pending) {
    const std::string_view reason = ToString(p.reason);
    lines.push_back(absl::StrCat("pending ", p.workload, " ",
                                 absl::string_view(reason.data(), reason.size()), " ", p.message));
  }
  return absl::StrJoin(lines, "\n");
}

// What a caller would use as a revision: changes whenever the workload does.
uint64_t ContentRevision(const Workload& w) {
  std::string content = absl::StrCat(w.key, "|", w.priority, "|", w.priority_class, "|");
  for (const auto& [resource, amount] : w.per_pod) absl::StrAppend(&content, resource, amount);
  if (w.admitted) {
    absl::StrAppend(&content, "|", w.admitted->cluster_queue, "|", w.admitted->count);
    for (const auto& [resource, flavor] : w.admitted->flavors) {
      absl::StrAppend(&content, resource, flavor);
    }
  }
  return std::hash<std::string>{}(content) | 1;  // never 0
}

std::vector<std::string> RunScenario(uint64_t seed, Mode mode) {
  Scenario gen(seed);
  const int flavors = gen.Pick(1, 2);
  FakePlacementService fake(gen.Domains(flavors));
  World world(fake);
  for (int f = 0; f < flavors; ++f) {
    world.Flavor("f" + std::to_string(f), {{"pool", "f" + std::to_string(f)}});
  }
  const int queues = gen.Pick(2, 4);
  for (int q = 0; q < queues; ++q) world.Queue(gen.Queue(q, flavors));
  world.snapshot.fair_sharing.enable = gen.Coin(0.3);
  CycleCache cache;
  CycleOptions options;
  if (mode != Mode::kNoCache) options.cache = &cache;
  std::vector<std::string> digests;
  int serial = 0;
  for (int cycle = 0; cycle < 4; ++cycle) {
    for (int n = gen.Pick(2, 8); n > 0; --n) world.Add(gen.NewJob(queues, ++serial, cycle));
    if (gen.Coin(0.3)) {
      std::reverse(world.snapshot.cluster_queues.begin(), world.snapshot.cluster_queues.end());
    }
    if (gen.Coin(0.3)) {
      // A priority class some workloads name changes value.
      world.snapshot.priority_classes["batch"] = gen.Pick(0, 3);
      for (Workload& w : world.snapshot.workloads) {
        if (gen.Coin(0.2)) w.priority_class = "batch";
      }
    }
    std::vector<Workload>& workloads = world.snapshot.workloads;
    if (gen.Coin(0.3)) {
      std::rotate(workloads.begin(), workloads.begin() + gen.Pick(0, workloads.size() - 1),
                  workloads.end());
    }
    // A copy of one workload, for this cycle only: the later one is refused as a duplicate.
    const bool duplicate = gen.Coin(0.2);
    if (duplicate) workloads.push_back(workloads[gen.Pick(0, workloads.size() - 1)]);
    for (Workload& w : workloads) {
      w.revision = mode == Mode::kCacheWithRevisions ? ContentRevision(w) : 0;
    }
    CycleResult result = world.Cycle(options);
    if (duplicate) workloads.pop_back();
    world.Apply(result);
    digests.push_back(Digest(result));
    std::erase_if(world.snapshot.workloads, [&](const Workload& w) {
      if (!w.admitted || !gen.Coin(0.3)) return false;
      EXPECT_TRUE(fake.Release(w.key).ok()) << w.key;
      return true;
    });
  }
  return digests;
}

TEST(CycleCacheTest, DecisionsAreIdenticalWithAndWithoutTheCache) {
  int compared = 0;
  for (uint64_t seed = 7000; seed < 8500; ++seed) {
    const std::vector<std::string> plain = RunScenario(seed, Mode::kNoCache);
    const std::vector<std::string> cached = RunScenario(seed, Mode::kCache);
    const std::vector<std::string> revised = RunScenario(seed, Mode::kCacheWithRevisions);
    ASSERT_EQ(plain.size(), cached.size());
    for (size_t c = 0; c < plain.size(); ++c) {
      ASSERT_EQ(plain[c], cached[c]) << "seed " << seed << " cycle " << c;
      ASSERT_EQ(plain[c], revised[c]) << "seed " << seed << " cycle " << c << " (revisions)";
      if (!plain[c].empty()) ++compared;
    }
  }
  EXPECT_GT(compared, 3000);  // the scenarios decide something, so the comparison means something
}

// The cache forgets workloads that are gone once it holds many more than the snapshot (1,100
// gone against 16 here); its positional hints must go with them. A workload without a key
// takes no hint, so the one at position 1 of the second cycle leaves that position's hint on
// the first cycle's team-a/old-1, which the sweep erases: a hint kept past the sweep is read
// after it is freed in the third cycle (the `sanitize` ctest runs this under AddressSanitizer).
TEST(CycleCacheTest, ForgettingWorkloadsThatAreGoneChangesNoDecision) {
  auto run = [](Mode mode) {
    FakePlacementService fake({{.name = "b1", .gpus = 64}});
    World world(fake);
    world.Flavor("h100").Queue(GpuQueue("team-a", "", {{"h100", Gpu(32)}}));
    CycleCache cache;
    CycleOptions options;
    if (mode != Mode::kNoCache) options.cache = &cache;
    std::vector<std::string> digests;
    auto cycle = [&] {
      CycleResult result = world.Cycle(options);
      world.Apply(result);
      digests.push_back(Digest(result));
    };
    // 1,100 jobs larger than the queue's quota wait; then all but ten are deleted, one without
    // a key and five small ones come; then the list is reversed and one more comes.
    for (int i = 0; i < 1100; ++i) world.Add(Job(absl::StrCat("team-a/old-", i), 1, 40));
    cycle();
    std::vector<Workload> kept;
    for (size_t i = 0; i < world.snapshot.workloads.size(); i += 110) {
      kept.push_back(world.snapshot.workloads[i]);
    }
    world.snapshot.workloads = kept;
    world.snapshot.workloads.insert(world.snapshot.workloads.begin() + 1, Job("", 1, 4));
    for (int i = 0; i < 5; ++i) world.Add(Job(absl::StrCat("team-a/new-", i), 1, 4, i, 1));
    cycle();
    std::reverse(world.snapshot.workloads.begin(), world.snapshot.workloads.end());
    world.Add(Job("team-a/last", 2, 4, 0, 2));
    cycle();
    return digests;
  };
  const std::vector<std::string> plain = run(Mode::kNoCache);
  const std::vector<std::string> cached = run(Mode::kCache);
  ASSERT_EQ(plain.size(), 3u);
  EXPECT_EQ(plain, cached);
  EXPECT_NE(plain[1].find("admit team-a/new-4"), std::string::npos) << plain[1];
  EXPECT_NE(plain[2].find("admit team-a/last"), std::string::npos) << plain[2];
  EXPECT_NE(plain[1].find("pending  Invalid the workload has no key"), std::string::npos)
      << plain[1];
}

}  // namespace
}  // namespace phalanx::admission
