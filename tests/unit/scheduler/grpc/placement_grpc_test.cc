// The gRPC adapters end to end on 127.0.0.1: a caller of GrpcPlacementService must not be able
// to tell it from the InProcessPlacementService (same results, same codes, same messages), and
// the transport's own failures must say which target failed.
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/status.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/grpc/placement_grpc_client.h"
#include "scheduler/grpc/placement_grpc_server.h"
#include "scheduler/in_process_placement_service.h"
#include "scheduler/snapshot_summary.h"
#include "scheduler/synthetic_cluster.h"
#include "tests/mocks/scheduler/mock_placement_service.h"
#include "tests/unit/scheduler/grpc/describe.h"
#include "tests/unit/scheduler/test_cluster.h"

namespace phalanx::placement {
namespace {

using ::phalanx::placement::testing::Describe;
using ::phalanx::testing::StatusIs;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using namespace ::phalanx::placement::testing;  // NOLINT: the test cluster vocabulary

std::string Local(int port) { return absl::StrCat("127.0.0.1:", port); }

// One snapshot served in process, an identical one behind a real gRPC server on 127.0.0.1:0.
class TwinServices {
 public:
  explicit TwinServices(const std::function<ClusterSnapshot()>& build)
      : local_(build()),
        backend_(build()),
        grpc_service_(
            backend_,
            [this](const SummaryOptions& options) { return SummaryOf(backend_, options); },
            [this](std::string_view method, double seconds, absl::StatusCode code) {
              absl::MutexLock lock(&mu_);
              observed_.emplace_back(std::string(method), code);
              EXPECT_GE(seconds, 0);
            }) {}

  absl::Status Start() {
    ASSIGN_OR_RETURN(server_, StartPlacementServer(grpc_service_, {}));
    client_ = std::make_unique<GrpcPlacementService>(Local(server_.port));
    return absl::OkStatus();
  }

  static SnapshotSummary SummaryOf(const InProcessPlacementService& service,
                                   const SummaryOptions& options) {
    SnapshotSummary summary;
    service.Read([&](const ClusterSnapshot& s) { summary = Summarize(s, options); });
    return summary;
  }

  // Runs `call` against both services, expects the same answer field by field and returns the
  // in-process one (for checks that the case meant to be covered was).
  template <typename Call>
  auto Same(const std::string& what, const Call& call) {
    auto expected = call(static_cast<PlacementService&>(local_));
    auto actual = call(static_cast<PlacementService&>(*client_));
    EXPECT_EQ(Describe(actual), Describe(expected)) << what;
    return expected;
  }
  template <typename Call>
  void Check(const std::string& what, const Call& call) {
    (void)Same(what, call);
  }

  // The whole state, as a summary with histograms of every domain, must agree as well.
  void ExpectSameState(const std::string& what) {
    SummaryOptions all{.max_domains = kMaxSummaryDomains, .histogram = true};
    absl::StatusOr<SnapshotSummary> remote = client_->Snapshot(all);
    ASSERT_OK(remote);
    EXPECT_EQ(Describe(*remote), Describe(SummaryOf(local_, all))) << what;
    std::vector<std::string> local_jobs, remote_jobs;
    local_.Read([&](const ClusterSnapshot& s) { local_jobs = s.ReservedJobs(); });
    backend_.Read([&](const ClusterSnapshot& s) { remote_jobs = s.ReservedJobs(); });
    EXPECT_EQ(remote_jobs, local_jobs) << what;
  }

  std::vector<std::string> ReservedJobs() const {
    std::vector<std::string> jobs;
    local_.Read([&](const ClusterSnapshot& s) { jobs = s.ReservedJobs(); });
    return jobs;
  }

  std::vector<std::pair<std::string, absl::StatusCode>> observed() const {
    absl::MutexLock lock(&mu_);
    return observed_;
  }

  InProcessPlacementService& local() { return local_; }
  InProcessPlacementService& backend() { return backend_; }
  GrpcPlacementService& client() { return *client_; }

 private:
  InProcessPlacementService local_;
  InProcessPlacementService backend_;
  PlacementGrpcService grpc_service_;
  RunningPlacementServer server_;
  std::unique_ptr<GrpcPlacementService> client_;
  mutable absl::Mutex mu_;
  std::vector<std::pair<std::string, absl::StatusCode>> observed_ ABSL_GUARDED_BY(mu_);
};

// GB200-like: 4 GPUs per node, NVLink cliques under layer-3.
//   a/b/nn-1: cliques c1 (g0..g3), c2 (h0..h3); a/b/nn-2: c3 (i0..i5, a pod uses 2 GPUs of i0);
//   a/c/nn-3: c4 (j0..j3, k0 NotReady, t0 tainted NoSchedule), c5 (l0..l3).
ClusterSnapshot ScriptedCluster() {
  ClusterSnapshot snapshot(Gb200());
  AddNodes(snapshot, {"a", "b", "nn-1", "c1"}, "g", 4, 4);
  AddNodes(snapshot, {"a", "b", "nn-1", "c2"}, "h", 4, 4);
  AddNodes(snapshot, {"a", "b", "nn-2", "c3"}, "i", 6, 4);
  AddNodes(snapshot, {"a", "c", "nn-3", "c4"}, "j", 4, 4);
  AddNodes(snapshot, {"a", "c", "nn-3", "c5"}, "l", 4, 4);
  NodeInfo down = GpuNode(snapshot.topology(), "k0", {"a", "c", "nn-3", "c4"}, 4);
  down.ready = false;
  EXPECT_OK(snapshot.AddNode(down));
  NodeInfo tainted = GpuNode(snapshot.topology(), "t0", {"a", "c", "nn-3", "c4"}, 4);
  tainted.taints = {{"example.com/maintenance", "true", "NoSchedule"}};
  EXPECT_OK(snapshot.AddNode(tainted));
  EXPECT_OK(snapshot.AddPod({"other/p1", "i0", {{"nvidia.com/gpu", 2}}, "", -1}));
  return snapshot;
}

GangRequest Gpu4(std::string job, int32_t count, std::string required = "") {
  return Gang(std::move(job), count, 4, std::move(required));
}

class PlacementGrpcTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK(twin_.Start()); }
  TwinServices twin_{ScriptedCluster};
};

TEST_F(PlacementGrpcTest, ScriptedSequenceAnswersExactlyAsInProcess) {
  // ReserveBatch: fits, misfits, invalid requests, elastic, groups, a duplicate, tolerations.
  GangRequest elastic = Gpu4("t/el", 0, kLayer3);
  elastic.elastic = ElasticRange{.min = 2, .max = 8, .step = 2};
  // Beside t/a in nn-1, where it can grow once t/a is released (left to itself it would take
  // clique c5, in nn-3, the fuller layer-3 domain once t/tol is there).
  elastic.node_selector = {{kLayer3, "nn-1"}};
  GangRequest grouped = Gpu4("t/grp", 8);
  grouped.group_size = 4;
  grouped.group_level = kClique;
  GangRequest tolerant = Gpu4("t/tol", 5, kClique);
  tolerant.node_selector = {{kClique, "c4"}};
  tolerant.tolerations = {{"example.com/maintenance", "Exists", "", "NoSchedule"}};
  GangRequest intolerant = Gpu4("t/intol", 4, kClique);
  intolerant.node_selector = {{kClique, "c4"}};
  GangRequest bad_level = Gpu4("t/bogus", 1, "no-such-level");
  std::vector<GangRequest> batch = {Gpu4("t/a", 4, kClique), tolerant,
                                    Gpu4("t/huge", 30, kLayer3), Gpu4("t/zero", 0),
                                    bad_level,               elastic,
                                    Gpu4("t/a", 1),          grouped,
                                    intolerant};
  auto results = twin_.Same("first batch", [&](PlacementService& s) {
    return s.ReserveBatch(batch);
  });
  ASSERT_EQ(results.size(), batch.size());
  EXPECT_TRUE(results[0].ok() && results[0]->placed);
  ASSERT_TRUE(results[1].ok() && results[1]->placed);
  EXPECT_THAT(results[1]->placement.nodes, ::testing::Contains("t0"));
  EXPECT_TRUE(results[2].ok() && !results[2]->placed);
  EXPECT_THAT(results[3], StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(results[4], StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_TRUE(results[5].ok() && results[5]->placed);
  EXPECT_EQ(results[5]->placement.domain.path.back(), "c2");
  EXPECT_THAT(results[6], StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_TRUE(results[7].ok() && results[7]->placed);
  ASSERT_TRUE(results[8].ok() && !results[8]->placed);
  EXPECT_THAT(results[8]->explanation.nodes_rejected, ::testing::Contains(Pair("Tainted", 1)));
  twin_.ExpectSameState("after the first batch");

  // Release, including NotFound.
  twin_.Check("release", [](PlacementService& s) { return s.Release("t/a"); });
  EXPECT_THAT(twin_.Same("release again", [](PlacementService& s) { return s.Release("t/a"); }),
              StatusIs(absl::StatusCode::kNotFound));
  twin_.Check("release unknown", [](PlacementService& s) { return s.Release("t/never"); });

  // Resize: grow, shrink, invalid, below the elastic minimum, unknown, no room.
  auto grown = twin_.Same("grow", [](PlacementService& s) { return s.Resize("t/el", 8); });
  EXPECT_TRUE(grown.ok() && grown->placed) << Describe(grown);
  auto shrunk = twin_.Same("shrink", [](PlacementService& s) { return s.Resize("t/el", 4); });
  EXPECT_TRUE(shrunk.ok() && shrunk->placed && shrunk->placement.nodes.size() == 4);
  const absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;
  EXPECT_THAT(twin_.Same("resize to 0", [](PlacementService& s) { return s.Resize("t/el", 0); }),
              StatusIs(kInvalid));
  EXPECT_THAT(twin_.Same("below min", [](PlacementService& s) { return s.Resize("t/el", 1); }),
              StatusIs(kInvalid));
  EXPECT_THAT(
      twin_.Same("resize unknown", [](PlacementService& s) { return s.Resize("t/never", 2); }),
      StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(
      twin_.Same("group mismatch", [](PlacementService& s) { return s.Resize("t/grp", 6); }),
      StatusIs(kInvalid));
  auto no_room = twin_.Same("no room", [](PlacementService& s) { return s.Resize("t/el", 400); });
  EXPECT_TRUE(no_room.ok() && !no_room->placed);
  twin_.ExpectSameState("after resizes");

  // ReplaceNodes: a move, its repeat (unchanged), no room, unknown job, an empty list.
  const std::string failed = shrunk->placement.nodes[1];
  auto moved = twin_.Same("replace", [&](PlacementService& s) {
    return s.ReplaceNodes("t/el", {failed});
  });
  ASSERT_TRUE(moved.ok() && moved->placed) << Describe(moved);
  EXPECT_NE(moved->placement.nodes[1], failed);
  EXPECT_EQ(moved->placement.nodes[0], shrunk->placement.nodes[0]);
  auto repeat = twin_.Same("replace again", [&](PlacementService& s) {
    return s.ReplaceNodes("t/el", {failed});
  });
  EXPECT_TRUE(repeat.ok() && repeat->placed && repeat->placement.nodes == moved->placement.nodes);
  auto stuck = twin_.Same("replace without room", [](PlacementService& s) {
    return s.ReplaceNodes("t/tol", {"j0", "t0"});  // its clique c4 has no spare
  });
  ASSERT_TRUE(stuck.ok() && !stuck->placed) << Describe(stuck);
  EXPECT_THAT(stuck->explanation.summary, HasSubstr("cannot replace ranks"));
  EXPECT_THAT(twin_.Same("replace unknown",
                         [](PlacementService& s) { return s.ReplaceNodes("t/never", {"j0"}); }),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(
      twin_.Same("replace nothing", [](PlacementService& s) { return s.ReplaceNodes("t/el", {}); }),
      StatusIs(kInvalid));
  twin_.ExpectSameState("after replacements");

  // Place / Explain: fit, misfit, invalid; nothing is held.
  auto fit = twin_.Same("place fit",
                        [](PlacementService& s) { return s.Place(Gpu4("t/x", 2, kClique)); });
  EXPECT_TRUE(fit.ok() && fit->placed);
  auto misfit = twin_.Same("place misfit",
                           [](PlacementService& s) { return s.Place(Gpu4("t/x", 9, kClique)); });
  EXPECT_TRUE(misfit.ok() && !misfit->placed && misfit->explanation.best_domain.has_value());
  EXPECT_THAT(twin_.Same("place invalid", [](PlacementService& s) { return s.Place(Gpu4("", 2)); }),
              StatusIs(kInvalid));

  // PlanPreemption: feasible with shrinkable and evictable candidates, infeasible (priorities),
  // invalid.
  std::vector<std::string> running = twin_.ReservedJobs();
  std::vector<RunningGang> low, high;
  for (const std::string& job : running) {
    RunningGang gang{.job = job, .priority = 1};
    if (job == "t/el") gang.elastic = ElasticRange{.min = 2, .max = 8, .step = 2};
    low.push_back(gang);
    gang.priority = 100;
    high.push_back(gang);
  }
  GangRequest vip = Gpu4("t/vip", 8, kLayer3);
  vip.priority = 50;
  auto feasible = twin_.Same("preempt feasible",
                             [&](PlacementService& s) { return s.PlanPreemption(vip, low); });
  ASSERT_OK(feasible);
  EXPECT_TRUE(feasible->feasible);
  EXPECT_FALSE(feasible->victims.empty());
  auto infeasible = twin_.Same("preempt infeasible",
                               [&](PlacementService& s) { return s.PlanPreemption(vip, high); });
  ASSERT_OK(infeasible);
  EXPECT_FALSE(infeasible->feasible);
  auto invalid_plan = twin_.Same("preempt invalid", [&](PlacementService& s) {
    return s.PlanPreemption(Gpu4("t/v", -1), low);
  });
  EXPECT_THAT(invalid_plan, StatusIs(kInvalid));

  // EstimateStart: fits now, after ends (in another order than given), never, invalid.
  std::vector<EndingGang> ends;
  for (size_t i = 0; i < running.size(); ++i) {
    ends.push_back({running[i], static_cast<int64_t>(100 * (running.size() - i))});
  }
  ends.push_back({"t/not-running", 50});
  auto now = twin_.Same("estimate now", [&](PlacementService& s) {
    return s.EstimateStart(Gpu4("t/w", 1, kClique), ends);
  });
  ASSERT_OK(now);
  EXPECT_TRUE(now->feasible);
  EXPECT_EQ(now->ended, 0);
  auto later = twin_.Same("estimate later", [&](PlacementService& s) {
    return s.EstimateStart(Gpu4("t/w", 8, kLayer3), ends);
  });
  ASSERT_OK(later);
  EXPECT_TRUE(later->feasible);
  EXPECT_GT(later->ended, 0);
  EXPECT_GT(later->start, 0);
  auto never = twin_.Same("estimate never", [&](PlacementService& s) {
    return s.EstimateStart(Gpu4("t/w", 400, kLayer3), ends);
  });
  ASSERT_OK(never);
  EXPECT_FALSE(never->feasible);
  EXPECT_THAT(never->explanation.summary, HasSubstr("not even after all"));
  EXPECT_THAT(twin_.Same("estimate unnamed", [&](PlacementService& s) {
    return s.EstimateStart(Gpu4("t/w", 2), {{"", 5}});
  }), StatusIs(kInvalid));
  twin_.ExpectSameState("after estimates");

  // Reserve is a one-element batch on the wire; its answers match too.
  auto reserved =
      twin_.Same("reserve", [](PlacementService& s) { return s.Reserve(Gpu4("t/b", 2, kClique)); });
  EXPECT_TRUE(reserved.ok() && reserved->placed);
  EXPECT_THAT(twin_.Same("reserve again",
                         [](PlacementService& s) { return s.Reserve(Gpu4("t/b", 2)); }),
              StatusIs(absl::StatusCode::kAlreadyExists));
  twin_.Check("empty batch", [](PlacementService& s) { return s.ReserveBatch({}); });
  twin_.ExpectSameState("at the end");
  twin_.backend().Read([](const ClusterSnapshot& s) { EXPECT_OK(s.CheckConsistency()); });
}

// Tallies the kinds of answers a random sequence produced.
struct Outcomes {
  int placed = 0;
  int not_placed = 0;
  int errors = 0;

  void Count(const absl::Status& status) { errors += !status.ok(); }
  void Count(const absl::StatusOr<PreemptionPlan>& plan) { errors += !plan.ok(); }
  void Count(const absl::StatusOr<PlacementResult>& result) {
    if (!result.ok()) {
      ++errors;
    } else {
      ++(result->placed ? placed : not_placed);
    }
  }
};

// Property: for any sequence of calls, the gRPC client and the in-process service give the same
// answer to every call (results, codes, messages) and end in the same state. Random sequences
// of a few hundred calls on a fragmented, noisy synthetic cluster, fixed seeds.
TEST(PlacementGrpcProperty, RandomSequencesAnswerExactlyAsInProcess) {
  const SyntheticClusterOptions shape{.nodes = 96, .nodes_per_leaf = 8, .fanout = 2,
                                      .occupancy = 0.5, .not_ready_fraction = 0.05,
                                      .tainted_fraction = 0.05, .missing_label_fraction = 0.05};
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    SyntheticClusterOptions options = shape;
    options.seed = seed;
    TwinServices twin([&] { return BuildSyntheticCluster(options)->snapshot; });
    ASSERT_OK(twin.Start());
    std::mt19937_64 rng(seed);
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
    std::vector<std::string> levels = {"", kHostname};
    const std::string layer = std::string(kEksLayerPrefix);
    for (int i = 1; i <= 4; ++i) levels.push_back(absl::StrCat(layer, i));
    auto job = [&] { return absl::StrCat("p/j", pick(60)); };
    // Mostly a job that holds a reservation, sometimes any (NotFound).
    auto held_job = [&] {
      std::vector<std::string> held = twin.ReservedJobs();
      return held.empty() || pick(4) == 0 ? job() : held[pick(static_cast<int>(held.size()))];
    };
    auto request = [&] {
      const int32_t pods = pick(20) == 0 ? 0 : pick(12) + 1;
      GangRequest r = GpuGang(job(), pods, std::vector<int64_t>{1, 2, 4, 8, 16}[pick(5)], options);
      r.required_level = levels[pick(static_cast<int>(levels.size()))];
      if (pick(20) == 0) r.required_level = "no-such-level";
      if (pick(4) == 0) r.preferred_level = levels[pick(static_cast<int>(levels.size()))];
      if (pick(4) == 0) {
        int min = pick(4) + 1;
        r.elastic = ElasticRange{.min = min, .max = min + pick(9), .step = pick(2) + 1};
      }
      if (pick(6) == 0) {
        r.group_size = 2;
        r.group_level = absl::StrCat(layer, 4);
      }
      if (pick(5) == 0) r.tolerations = {{"example.com/maintenance", "Exists", "", ""}};
      if (pick(8) == 0) r.node_selector = {{absl::StrCat(layer, 1), "nn1-0001"}};
      r.priority = pick(10);
      return r;
    };

    Outcomes seen;
    auto count = [&](const auto& outcome) { seen.Count(outcome); };
    for (int op = 0; op < 300; ++op) {
      const std::string what = absl::StrCat("op ", op);
      switch (pick(8)) {
        case 0:
        case 1: {
          std::vector<GangRequest> batch(pick(6) + 1);
          for (GangRequest& r : batch) r = request();
          for (const auto& result : twin.Same(what, [&](PlacementService& s) {
                 return s.ReserveBatch(batch);
               })) {
            count(result);
          }
          break;
        }
        case 2: {
          GangRequest r = request();
          count(twin.Same(what, [&](PlacementService& s) { return s.Reserve(r); }));
          break;
        }
        case 3: {
          std::string j = held_job();
          count(twin.Same(what, [&](PlacementService& s) { return s.Release(j); }));
          break;
        }
        case 4: {
          std::string j = held_job();
          int32_t n = pick(18) - 1;
          count(twin.Same(what, [&](PlacementService& s) { return s.Resize(j, n); }));
          break;
        }
        case 5: {
          GangRequest r = request();
          count(twin.Same(what, [&](PlacementService& s) { return s.Place(r); }));
          break;
        }
        case 7: {
          // Some of a held job's nodes (or any node) fail.
          std::string j = held_job();
          std::vector<std::string> nodes;
          twin.local().Read([&](const ClusterSnapshot& s) {
            const ClusterSnapshot::Reservation* held = s.FindReservation(j);
            for (size_t r = 0; held != nullptr && r < held->ranks.size(); ++r) {
              if (pick(3) == 0) nodes.push_back(s.nodes()[held->ranks[r].node].info.name);
            }
            if (nodes.empty()) nodes.push_back(s.nodes()[pick(s.nodes().size())].info.name);
          });
          count(twin.Same(what, [&](PlacementService& s) { return s.ReplaceNodes(j, nodes); }));
          break;
        }
        case 6: {
          GangRequest r = request();
          std::vector<RunningGang> candidates;
          for (const std::string& j : twin.ReservedJobs()) {
            if (pick(3) == 0) continue;
            RunningGang& c = candidates.emplace_back(RunningGang{.job = j, .priority = pick(10)});
            if (pick(3) == 0) c.elastic = ElasticRange{.min = 1, .max = 12, .step = 1};
          }
          count(twin.Same(what, [&](PlacementService& s) {
            return s.PlanPreemption(r, candidates);
          }));
          break;
        }
      }
      if (op % 25 == 24) twin.ExpectSameState(what);
      if (::testing::Test::HasFailure()) break;  // the first difference is the useful one
    }
    twin.ExpectSameState("at the end");
    twin.local().Read([](const ClusterSnapshot& s) { EXPECT_OK(s.CheckConsistency()); });
    // The sequence covered every kind of answer.
    EXPECT_GT(seen.placed, 50);
    EXPECT_GT(seen.not_placed, 50);
    EXPECT_GT(seen.errors, 50);
  }
}

TEST_F(PlacementGrpcTest, SnapshotMatchesSummarizeOnTheSameSnapshot) {
  ASSERT_OK(twin_.client().Reserve(Gpu4("t/a", 4, kClique)).status());
  for (SummaryOptions options : {SummaryOptions{}, SummaryOptions{.max_level = 1},
                                 SummaryOptions{.max_domains = 3, .histogram = true},
                                 SummaryOptions{.max_domains = 0}}) {
    ASSERT_OK_AND_ASSIGN(SnapshotSummary remote, twin_.client().Snapshot(options));
    SnapshotSummary expected = TwinServices::SummaryOf(twin_.backend(), options);
    EXPECT_EQ(Describe(remote), Describe(expected));
    EXPECT_EQ(remote.reservations, 1);
  }
  EXPECT_THAT(twin_.client().Snapshot({.max_domains = -1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_domains: -1")));
}

TEST_F(PlacementGrpcTest, ObserverSeesEveryRpcWithItsOutcome) {
  (void)twin_.client().Place(Gpu4("t/x", 1));
  (void)twin_.client().ReserveBatch({Gpu4("t/x", 1), Gpu4("t/y", 0)});
  (void)twin_.client().Release("t/none");
  (void)twin_.client().Resize("t/x", 2);
  (void)twin_.client().PlanPreemption(Gpu4("t/z", 1), {});
  (void)twin_.client().Snapshot({});
  (void)twin_.client().ReplaceNodes("t/x", {"g0"});
  EXPECT_THAT(twin_.observed(),
              ElementsAre(Pair("Explain", absl::StatusCode::kOk),
                          Pair("ReserveBatch", absl::StatusCode::kOk),
                          Pair("Release", absl::StatusCode::kNotFound),
                          Pair("Resize", absl::StatusCode::kOk),
                          Pair("PlanPreemption", absl::StatusCode::kOk),
                          Pair("Snapshot", absl::StatusCode::kOk),
                          Pair("ReplaceNodes", absl::StatusCode::kOk)));
}

TEST_F(PlacementGrpcTest, RequestsOverTheLimitsAreRefusedNamingTheField) {
  // One request over a per-gang limit fails alone; the others are reserved in order.
  std::vector<absl::StatusOr<PlacementResult>> results = twin_.client().ReserveBatch(
      {Gpu4("t/a", 4, kClique), Gpu4("t/big", kMaxPodsPerGang + 1), Gpu4("t/b", 4, kClique)});
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].ok() && results[0]->placed);
  EXPECT_THAT(results[1], StatusIs(absl::StatusCode::kInvalidArgument,
                                   "requests[1].count: 65537 pods, more than the limit of 65536"));
  ASSERT_TRUE(results[2].ok() && results[2]->placed);
  EXPECT_NE(results[2]->placement.domain, results[0]->placement.domain);
  EXPECT_THAT(twin_.ReservedJobs(), ::testing::IsEmpty()) << "the local twin was not called";
  std::vector<std::string> backend_jobs;
  twin_.backend().Read([&](const ClusterSnapshot& s) { backend_jobs = s.ReservedJobs(); });
  EXPECT_THAT(backend_jobs, ElementsAre("t/a", "t/b"));

  // An oversized batch is refused whole: every result says so, and nothing is held.
  std::vector<GangRequest> huge(kMaxBatchRequests + 1, Gpu4("t/many", 1));
  for (size_t i = 0; i < huge.size(); ++i) huge[i].job = absl::StrCat("t/many-", i);
  results = twin_.client().ReserveBatch(huge);
  ASSERT_EQ(results.size(), huge.size());
  for (const auto& result : results) {
    ASSERT_THAT(result, StatusIs(absl::StatusCode::kInvalidArgument,
                                 "requests: 10001 entries, more than the limit of 10000"));
  }
  twin_.backend().Read([&](const ClusterSnapshot& s) { backend_jobs = s.ReservedJobs(); });
  EXPECT_EQ(backend_jobs.size(), 2u);

  EXPECT_THAT(twin_.client().Release(std::string(kMaxStringBytes + 1, 'j')),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("job: 1025 bytes")));
  EXPECT_THAT(twin_.client().Resize("t/a", kMaxPodsPerGang + 1),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("new_count: 65537 pods")));
  EXPECT_THAT(twin_.client().ReplaceNodes("t/a", {"g0", std::string(kMaxStringBytes + 1, 'n')}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("nodes[1]: 1025 bytes")));
  EXPECT_THAT(twin_.client().Place(Gpu4("t/a", kMaxPodsPerGang + 1)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("request.count: 65537")));
}

TEST(PlacementGrpcServer, MessagesOverTheReceiveLimitFailBeforeDecoding) {
  InProcessPlacementService backend(ScriptedCluster());
  PlacementGrpcService service(backend, nullptr);
  ASSERT_OK_AND_ASSIGN(RunningPlacementServer server,
                       StartPlacementServer(service, {.max_receive_message_bytes = 4096}));
  GrpcPlacementService client(Local(server.port));
  std::vector<GangRequest> batch(100, Gpu4(std::string(100, 'j'), 1));
  std::vector<absl::StatusOr<PlacementResult>> results = client.ReserveBatch(batch);
  ASSERT_EQ(results.size(), batch.size());
  EXPECT_THAT(results[0], StatusIs(absl::StatusCode::kResourceExhausted,
                                   HasSubstr("Placement.ReserveBatch to " + Local(server.port))));
  // No summary callback: Snapshot is UNIMPLEMENTED, said by the service itself.
  EXPECT_THAT(client.Snapshot({}), StatusIs(absl::StatusCode::kUnimplemented,
                                            "this server has no snapshot summary"));
}

TEST(PlacementGrpcServer, ABoundPortIsNotSharedAndBadOptionsAreRefused) {
  InProcessPlacementService backend(ScriptedCluster());
  PlacementGrpcService service(backend, nullptr);
  ASSERT_OK_AND_ASSIGN(RunningPlacementServer first, StartPlacementServer(service, {}));
  EXPECT_GT(first.port, 0);
  PlacementGrpcService other(backend, nullptr);
  EXPECT_THAT(StartPlacementServer(other, {.address = Local(first.port)}),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr(Local(first.port))));
  PlacementGrpcService third(backend, nullptr);
  EXPECT_THAT(StartPlacementServer(third, {.max_receive_message_bytes = 0}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(PlacementGrpcClient, ServerDownIsUnavailableNamingTheTarget) {
  int port = 0;
  {
    InProcessPlacementService backend(ScriptedCluster());
    PlacementGrpcService service(backend, nullptr);
    ASSERT_OK_AND_ASSIGN(RunningPlacementServer server, StartPlacementServer(service, {}));
    port = server.port;
    server.server->Shutdown();
  }
  GrpcPlacementService client(Local(port));
  const std::string target = Local(port);
  EXPECT_THAT(client.Place(Gpu4("t/a", 1)),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr("Placement.Explain to " + target)));
  std::vector<absl::StatusOr<PlacementResult>> results =
      client.ReserveBatch({Gpu4("t/a", 1), Gpu4("t/b", 1)});
  ASSERT_EQ(results.size(), 2u);
  for (const auto& result : results) {
    EXPECT_THAT(result, StatusIs(absl::StatusCode::kUnavailable,
                                 HasSubstr("Placement.ReserveBatch to " + target)));
  }
  EXPECT_THAT(client.Reserve(Gpu4("t/a", 1)),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr(target)));
  EXPECT_THAT(client.Release("t/a"), StatusIs(absl::StatusCode::kUnavailable, HasSubstr(target)));
  EXPECT_THAT(client.Resize("t/a", 2), StatusIs(absl::StatusCode::kUnavailable, HasSubstr(target)));
  EXPECT_THAT(client.PlanPreemption(Gpu4("t/a", 1), {}),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr(target)));
  EXPECT_THAT(client.Snapshot({}), StatusIs(absl::StatusCode::kUnavailable, HasSubstr(target)));
}

// UnansweredSince: set by the first call the server does not answer, kept through the failures
// after it, cleared by an answer once a server listens on the port again.
TEST(PlacementGrpcClient, UnansweredSinceCoversTheOutageAndClearsOnAnAnswer) {
  InProcessPlacementService backend(ScriptedCluster());
  PlacementGrpcService service(backend, nullptr);
  int port = 0;
  {
    ASSERT_OK_AND_ASSIGN(RunningPlacementServer server, StartPlacementServer(service, {}));
    port = server.port;
    server.server->Shutdown();
  }
  GrpcPlacementService client(Local(port));
  EXPECT_EQ(client.UnansweredSince(), std::nullopt);
  const absl::Time before = absl::Now();
  EXPECT_THAT(client.Release("t/a"), StatusIs(absl::StatusCode::kUnavailable));
  const std::optional<absl::Time> since = client.UnansweredSince();
  ASSERT_TRUE(since.has_value());
  EXPECT_GE(*since, before);
  EXPECT_THAT(client.TopologyLevels(), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(client.UnansweredSince(), since);

  ASSERT_OK_AND_ASSIGN(RunningPlacementServer again,
                       StartPlacementServer(service, {.address = Local(port)}));
  // The channel retries after its reconnect backoff (2 s); calls fail fast until then.
  absl::StatusOr<PlacementResult> placed;
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  do {
    placed = client.Place(Gpu4("t/a", 1));
    if (!placed.ok()) absl::SleepFor(absl::Milliseconds(100));
  } while (!placed.ok() && absl::Now() < give_up);
  ASSERT_OK(placed.status());
  EXPECT_EQ(client.UnansweredSince(), std::nullopt);
}

// Errors of the service pass through untouched, even those whose code a transport failure
// could also produce; failures of the call itself name the target.
class PlacementGrpcMockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(server_, StartPlacementServer(service_, {}));
    // A generous deadline: on a loaded machine the first call's connect alone can take tens of
    // milliseconds, and these tests are about what comes back, not about time.
    client_ = std::make_unique<GrpcPlacementService>(
        Local(server_.port), GrpcClientOptions{.deadline = std::chrono::seconds(30)});
  }

  // Declared first so it is destroyed last: a handler blocked on it is finished by server_'s
  // shutdown before it goes away.
  absl::Notification release_;
  MockPlacementService mock_;
  PlacementGrpcService service_{mock_, nullptr};
  RunningPlacementServer server_;
  std::unique_ptr<GrpcPlacementService> client_;
};

TEST_F(PlacementGrpcMockTest, ServiceErrorsPassThroughUnchanged) {
  EXPECT_CALL(mock_, Release(_)).WillOnce(::testing::Return(absl::UnavailableError("busy")));
  EXPECT_CALL(mock_, Resize(_, _))
      .WillOnce(::testing::Return(absl::DeadlineExceededError("core gave up")));
  EXPECT_THAT(client_->Release("a/b"), StatusIs(absl::StatusCode::kUnavailable, "busy"));
  EXPECT_THAT(client_->Resize("a/b", 3),
              StatusIs(absl::StatusCode::kDeadlineExceeded, "core gave up"));
  EXPECT_EQ(client_->UnansweredSince(), std::nullopt) << "an error the service sent answers";
}

TEST_F(PlacementGrpcMockTest, AnExceptionInTheServiceIsInternal) {
  EXPECT_CALL(mock_, Place(_)).WillOnce([](const GangRequest&) -> absl::StatusOr<PlacementResult> {
    throw std::runtime_error("boom");
  });
  EXPECT_THAT(client_->Place(Gpu4("a/b", 1)),
              StatusIs(absl::StatusCode::kInternal, "Placement.Explain: boom"));
}

TEST_F(PlacementGrpcMockTest, AServiceAnsweringTheWrongNumberOfResultsIsInternal) {
  EXPECT_CALL(mock_, ReserveBatch(_))
      .WillOnce(::testing::Return(std::vector<absl::StatusOr<PlacementResult>>{}));
  std::vector<absl::StatusOr<PlacementResult>> results =
      client_->ReserveBatch({Gpu4("a/b", 1)});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_THAT(results[0], StatusIs(absl::StatusCode::kInternal, HasSubstr("0 results for 1")));
}

TEST_F(PlacementGrpcMockTest, TheDeadlineEndsACallNamingTheTarget) {
  // At most once: on a loaded machine the deadline can pass before the call reaches the server.
  // If it did reach it, the server's shutdown (server_ is destroyed before mock_ and release_)
  // waits for the handler, which returns once released.
  EXPECT_CALL(mock_, Place(_)).Times(::testing::AtMost(1)).WillOnce([this](const GangRequest&) {
    release_.WaitForNotification();
    return absl::StatusOr<PlacementResult>(PlacementResult{});
  });
  // The service never answers before the deadline, however slow the machine.
  GrpcPlacementService impatient(Local(server_.port),
                                 GrpcClientOptions{.deadline = std::chrono::milliseconds(50)});
  EXPECT_THAT(impatient.Place(Gpu4("a/b", 1)),
              StatusIs(absl::StatusCode::kDeadlineExceeded,
                       HasSubstr("Placement.Explain to " + Local(server_.port))));
  EXPECT_TRUE(impatient.UnansweredSince().has_value()) << "a call past its deadline is unanswered";
  release_.Notify();
}

}  // namespace
}  // namespace phalanx::placement
