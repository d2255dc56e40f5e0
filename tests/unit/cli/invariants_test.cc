// The invariant checker over a cluster recorded from the local control plane
// (testdata/invariants/: hack/phalanx-up.sh --nodes 32, deploy/examples queues, three jobs —
// team-llm/a of 4 pods that Succeeded, team-llm/b of 2 and team-vision/c of 3 Running — and a pod
// `team-llm/squatter` asking for 4 GPUs, created with spec.nodeName set to b-0's node so no
// scheduler checked it). Each test breaks one thing in a copy of that state, as a fault would,
// and expects exactly that invariant to be reported.
#include "cli/invariants.h"

#include <functional>

#include "absl/strings/str_cat.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/json.h"
#include "tests/unit/cli/testdata.h"

namespace phalanx::cli {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::Items;

// Items of a recorded list, the one named `name` changed by `edit`; items `drop` left out.
std::vector<std::string> Edited(const std::string& file, const std::string& name,
                                const std::function<void(rapidjson::Document&)>& edit,
                                const std::string& drop = "") {
  std::vector<std::string> out;
  for (const std::string& item : Items(file)) {
    absl::StatusOr<rapidjson::Document> doc = kube::ParseJson(item);
    EXPECT_TRUE(doc.ok());
    std::string_view item_name = kube::StringMember((*doc)["metadata"], "name");
    if (item_name == drop) continue;
    if (item_name == name && edit) edit(*doc);
    out.push_back(kube::ToJson(*doc));
  }
  return out;
}
std::vector<std::string> Pods(const std::string& name = "",
                              const std::function<void(rapidjson::Document&)>& edit = nullptr) {
  return Edited("invariants/pods.json", name, edit, "squatter");
}
std::vector<std::string> Jobs(const std::string& name = "",
                              const std::function<void(rapidjson::Document&)>& edit = nullptr) {
  return Edited("invariants/trainingjobs.json", name, edit);
}

// phalanx-scheduler's reservations as they were: b and c on the nodes of their status.placement.
std::vector<placement::ReservationSummary> Reservations(const ClusterState& state) {
  std::vector<placement::ReservationSummary> out;
  for (const kube::TrainingJob& job : state.jobs) {
    if (job.status.phase == "Running") {
      out.push_back({.job = job.meta.Key(), .nodes = job.status.placement->nodes});
    }
  }
  return out;
}

ClusterState State(const std::vector<std::string>& jobs, const std::vector<std::string>& pods) {
  absl::StatusOr<ClusterState> state =
      DecodeClusterState(jobs, pods, Items("invariants/nodes.json"));
  EXPECT_TRUE(state.ok()) << state.status();
  state->reservations = Reservations(*state);
  return *std::move(state);
}

auto Is(const std::string& invariant, const std::string& object, const std::string& message) {
  return AllOf(Field(&Violation::invariant, invariant), Field(&Violation::object, object),
               Field(&Violation::message, HasSubstr(message)));
}

TEST(InvariantsTest, TheRecordedClusterWithoutTheSquatterKeepsEveryInvariant) {
  ClusterState state = State(Jobs(), Pods());
  ASSERT_EQ(state.jobs.size(), 3u);
  EXPECT_EQ(state.nodes.size(), 32u);
  EXPECT_THAT(CheckInvariants(state, {.expected_jobs = {"team-llm/a", "team-llm/b",
                                                        "team-vision/c"}}),
              IsEmpty());
  EXPECT_THAT(PhaseCounts(state), ElementsAre(std::pair<const std::string, int>("Running", 2),
                                              std::pair<const std::string, int>("Succeeded", 1)));
}

// A job whose spec cannot be read (a template quantity that is not one, which the CRD lets
// through) is checked from its metadata and status like the others: before 2026-12-01 it failed
// `phalanx check` for the whole cluster.
TEST(InvariantsTest, AJobWhoseSpecCannotBeReadIsStillChecked) {
  std::vector<std::string> jobs = Jobs("a", [](rapidjson::Document& job) {
    rapidjson::Value& limits =
        job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"];
    kube::SetMember(limits, "cpu", rapidjson::Value("lots"), job.GetAllocator());
  });
  ASSERT_EQ(jobs.size(), 3u);
  ClusterState state = State(jobs, Pods());
  ASSERT_EQ(state.jobs.size(), 3u);
  EXPECT_THAT(CheckInvariants(state), IsEmpty());
  // And still found out: its pods bound while it reads as not admitted.
  jobs = Jobs("b", [](rapidjson::Document& job) {
    kube::SetMember(job["spec"], "replicas", rapidjson::Value("four"), job.GetAllocator());
    job["status"].RemoveMember("admission");
  });
  EXPECT_THAT(CheckInvariants(State(jobs, Pods())),
              Contains(Is("admitted_twice", "team-llm/b", "not admitted (phase Running)")));
}

TEST(InvariantsTest, APodBoundByHandOverCapacityOverCommitsItsNode) {
  absl::StatusOr<ClusterState> state = DecodeClusterState(
      Items("invariants/trainingjobs.json"), Items("invariants/pods.json"),
      Items("invariants/nodes.json"));
  ASSERT_OK(state.status());
  std::vector<Violation> found = CheckInvariants(*state);
  EXPECT_THAT(found, ElementsAre(Is("node_overcommitted", "p5-0004",
                                    "12 GPUs requested by bound pods (team-llm/b-0 "
                                    "team-llm/squatter), 8 allocatable")));
  EXPECT_TRUE(IsImmediate(found[0]));
}

TEST(InvariantsTest, ACreatedJobThatIsGoneIsLost) {
  ClusterState state = State(Jobs(), Pods());
  std::vector<Violation> found =
      CheckInvariants(state, {.expected_jobs = {"team-llm/a", "team-llm/zz"}});
  EXPECT_THAT(found, ElementsAre(Is("job_lost", "team-llm/zz", "no such TrainingJob")));
}

TEST(InvariantsTest, AGangWithOneRankUnboundIsPartial) {
  ClusterState state = State(Jobs(), Pods("c-2", [](rapidjson::Document& pod) {
    pod["spec"].RemoveMember("nodeName");
    pod["status"]["phase"].SetString("Pending");
  }));
  std::vector<Violation> found = CheckInvariants(state);
  ASSERT_THAT(found, ElementsAre(Is("partial_gang", "team-vision/c",
                                    "2 of 3 ranks bound; without a bound pod: ranks 2")));
  EXPECT_FALSE(IsImmediate(found[0]));
  // Its pod finished instead (Succeeded): no longer bound and live, still partial.
  state = State(Jobs(), Pods("c-2", [](rapidjson::Document& pod) {
    pod["status"]["phase"].SetString("Succeeded");
  }));
  EXPECT_THAT(CheckInvariants(state), ElementsAre(Is("partial_gang", "team-vision/c", "2 of 3")));
}

TEST(InvariantsTest, APodOffItsRanksNodeIsASecondPlacement) {
  ClusterState state = State(Jobs(), Pods("c-1", [](rapidjson::Document& pod) {
    pod["spec"]["nodeName"].SetString("p5-0020");
  }));
  EXPECT_THAT(CheckInvariants(state),
              ElementsAre(Is("admitted_twice", "team-vision/c",
                             "pod c-1 (rank 1) is bound to p5-0020, status.placement says "
                             "p5-0007")));
}

TEST(InvariantsTest, BoundPodsOfAJobThatIsNotAdmittedRunItTwice) {
  // b lost its admission (as a requeue would write) while its pods still run.
  ClusterState state = State(Jobs("b", [](rapidjson::Document& job) {
                               job["status"].RemoveMember("admission");
                               job["status"].RemoveMember("placement");
                               job["status"]["phase"].SetString("Queued");
                             }),
                             Pods());
  // (b is not Running, so its reservation is not in the list: released with the admission.)
  EXPECT_THAT(CheckInvariants(state),
              ElementsAre(Is("admitted_twice", "team-llm/b",
                             "not admitted (phase Queued) but 2 live pods are bound")));
  // Pods on their way out (deletionTimestamp set) no longer count.
  state = State(Jobs("b",
                     [](rapidjson::Document& job) {
                       job["status"].RemoveMember("admission");
                       job["status"]["phase"].SetString("Queued");
                     }),
                Edited("invariants/pods.json", "", nullptr, "squatter"));
  for (kube::Pod& pod : state.pods) {
    if (pod.meta.name == "b-0" || pod.meta.name == "b-1") {
      pod.meta.deletion_timestamp = "2026-11-25T00:41:00Z";
    }
  }
  EXPECT_THAT(CheckInvariants(state), IsEmpty());
}

TEST(InvariantsTest, MorePodsThanAdmittedReplicas) {
  ClusterState state = State(Jobs("c", [](rapidjson::Document& job) {
                               job["status"]["admission"]["replicas"].SetInt(2);
                               job["status"]["placement"]["nodes"].PopBack();
                             }),
                             Pods());
  state.reservations = {{.job = "team-llm/b", .nodes = {"p5-0004", "p5-0005"}},
                        {.job = "team-vision/c", .nodes = {"p5-0006", "p5-0007"}}};
  EXPECT_THAT(CheckInvariants(state),
              ElementsAre(Is("admitted_twice", "team-vision/c", "3 live pods for 2 admitted"),
                          Is("admitted_twice", "team-vision/c",
                             "pod c-2 (rank 2) is bound to p5-0008 but status.placement lists 2")));
}

TEST(InvariantsTest, ReservationsMustMatchTheJobsRankByRank) {
  ClusterState state = State(Jobs(), Pods());
  // a Succeeded but is still reserved; b's ranks are swapped; c's reservation is gone; and one
  // belongs to no job at all.
  state.reservations = {{.job = "team-llm/a", .nodes = {"p5-0000"}},
                        {.job = "team-llm/b", .nodes = {"p5-0005", "p5-0004"}},
                        {.job = "team-llm/ghost", .nodes = {"p5-0030"}}};
  EXPECT_THAT(
      CheckInvariants(state),
      ElementsAre(
          Is("reservation_mismatch", "team-llm/b",
             "reserved on [p5-0005 p5-0004], status.placement says [p5-0004 p5-0005]"),
          Is("reservation_missing", "team-vision/c", "holds no reservation"),
          Is("reservation_orphan", "team-llm/a", "for a job that is Succeeded"),
          Is("reservation_orphan", "team-llm/ghost", "for no job")));
  // Without the scheduler's view, none of these is checked.
  state.reservations.reset();
  EXPECT_THAT(CheckInvariants(state), IsEmpty());
}

TEST(InvariantsTest, ReportPrintsJsonAndText) {
  CheckReport report{.violations = {{"node_overcommitted", "p5-0004", "12 GPUs"}},
                     .phases = {{"Running", 2}},
                     .jobs = 2,
                     .pods = 5,
                     .nodes = 32,
                     .reservations = 2,
                     .reads = 1};
  absl::StatusOr<rapidjson::Document> json = kube::ParseJson(FormatCheck(report, true));
  ASSERT_OK(json.status());
  EXPECT_FALSE((*json)["ok"].GetBool());
  EXPECT_EQ((*json)["invariant_violations"].GetInt(), 1);
  EXPECT_EQ(kube::StringMember((*json)["violations"][0], "invariant"), "node_overcommitted");
  EXPECT_EQ((*json)["phases"]["Running"].GetInt(), 2);
  EXPECT_THAT(FormatCheck(report, false),
              HasSubstr("node_overcommitted p5-0004: 12 GPUs\nVIOLATED: 1 violations; 2 jobs "
                        "(Running=2), 5 pods, 32 nodes, 2 reservations"));
}

}  // namespace
}  // namespace phalanx::cli
