// A TrainingJob that names no PriorityClass is admitted, and preempts, at the priority of the
// cluster's globalDefault class, as its pods are created at it: the operator's translation
// (DecodePriorityClass, GlobalDefaultPriorityClass, WorkloadFromJob) through a real admission
// cycle.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/admission/admission_cycle.h"
#include "operator/server/queue_objects.h"
#include "tests/unit/operator/fake_placement_service.h"
#include "tests/unit/operator/world.h"

namespace phalanx::operator_server {
namespace {

using admission::testing::FakePlacementService;
using admission::testing::Gpu;
using admission::testing::GpuQueue;
using admission::testing::Job;
using admission::testing::PendingFor;
using admission::testing::World;
using ::phalanx::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

PriorityClass Decode(const std::string& name, int32_t value, bool global_default) {
  absl::StatusOr<PriorityClass> pc = DecodePriorityClass(absl::StrCat(
      R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":")", name,
      R"("},"value":)", value, global_default ? R"(,"globalDefault":true})" : "}"));
  EXPECT_THAT(pc, IsOk());
  return *pc;
}

// team-a/nameless: 2 pods x 8 GPUs in TrainingQueue team-a/main, with `class_name` (if any).
kube::TrainingJob Nameless(const std::string& class_name) {
  const std::string spec_class =
      class_name.empty() ? "" : absl::StrCat(R"("priorityClassName":")", class_name, R"(",)");
  absl::StatusOr<kube::TrainingJob> job = kube::DecodeTrainingJob(absl::StrCat(
      R"({"apiVersion":"phalanx.dev/v1alpha1","kind":"TrainingJob","metadata":{"name":)",
      R"("nameless","namespace":"team-a","creationTimestamp":"2026-11-30T12:00:00Z",)",
      R"("resourceVersion":"7"},)", R"("spec":{"queueName":"main","replicas":2,)", spec_class,
      R"("template":{"spec":{"containers":[{"name":"t","image":"x",)",
      R"("resources":{"limits":{"nvidia.com/gpu":"8"}}}]}}}})"));
  EXPECT_THAT(job, IsOk());
  return *job;
}

// ClusterTrainingQueue team-a: 32 GPUs of flavor h100 on one 32-GPU block, withinClusterQueue
// LowerPriority; the operator's PriorityClasses are `classes`.
struct TeamQueue {
  explicit TeamQueue(const std::vector<PriorityClass>& classes) {
    admission::ClusterQueue cq = GpuQueue("team-a", "", {{"h100", Gpu(32)}});
    cq.preemption.within_cluster_queue = admission::WithinClusterQueuePolicy::kLowerPriority;
    world.Flavor("h100").Queue(cq);
    for (const PriorityClass& pc : classes) world.snapshot.priority_classes[pc.name] = pc.value;
  }
  // Admitted and holding `w.count` pods of 8 GPUs.
  void Running(const admission::Workload& w) { world.Running(fake, "b1", w, "team-a", "h100"); }

  FakePlacementService fake{{{.name = "b1", .gpus = 32}}};
  World world{fake};
};

// The queue full with team-a/low, of class low (100); team-a/nameless wants 16 GPUs.
admission::CycleResult Race(const std::vector<PriorityClass>& classes,
                            const std::string& class_name) {
  TeamQueue queue(classes);
  admission::Workload low = Job("team-a/low", 4, 8);
  low.priority_class = "low";
  queue.Running(low);
  absl::StatusOr<admission::Workload> nameless = WorkloadFromJob(
      Nameless(class_name), 0, /*allow_job_priority=*/false, GlobalDefaultPriorityClass(classes));
  EXPECT_THAT(nameless, IsOk());
  queue.world.Add(*nameless);
  return queue.world.Cycle();
}

std::vector<std::string> Victims(const admission::CycleResult& result) {
  std::vector<std::string> victims;
  for (const admission::PreemptionDecision& p : result.preemptions) victims.push_back(p.victim);
  return victims;
}

TEST(GlobalDefaultPriorityTest, AJobWithoutAClassPreemptsAtTheDefaultsValue) {
  admission::CycleResult result =
      Race({Decode("low", 100, false), Decode("standard", 1000, true)}, "");
  EXPECT_THAT(Victims(result), ElementsAre("team-a/low"));
  ASSERT_EQ(result.preemptions.size(), 1u);
  EXPECT_EQ(result.preemptions[0].preemptor, "team-a/nameless");
}

TEST(GlobalDefaultPriorityTest, WithoutADefaultAJobWithoutAClassHasPriorityZero) {
  admission::CycleResult result =
      Race({Decode("low", 100, false), Decode("standard", 1000, false)}, "");
  EXPECT_THAT(result.preemptions, IsEmpty());
  ASSERT_NE(PendingFor(result, "team-a/nameless"), nullptr);
  EXPECT_THAT(PendingFor(result, "team-a/nameless")->message,
              HasSubstr("preemption: no running workload is eligible"));
}

TEST(GlobalDefaultPriorityTest, ItsOwnClassWinsOverTheDefault) {
  admission::CycleResult result =
      Race({Decode("low", 100, false), Decode("standard", 1000, true)}, "low");
  EXPECT_THAT(result.preemptions, IsEmpty());  // equal priority is not lower
}

// A default below the running job's class: the job without a class is the lower one.
TEST(GlobalDefaultPriorityTest, ALowDefaultPreemptsNobodyAbove) {
  admission::CycleResult result = Race({Decode("low", 100, false), Decode("batch", 10, true)}, "");
  EXPECT_THAT(result.preemptions, IsEmpty());
}

// The class of a job that names none depends on more than its object: a default moved from one
// class to another (no class created or deleted, so the core's view of the classes is the same)
// changes it though its resourceVersion does not, and a CycleCache must not keep the old one.
TEST(GlobalDefaultPriorityTest, AMovedDefaultIsSeenThoughTheJobDidNotChange) {
  TeamQueue queue({Decode("low", 100, false), Decode("standard", 1000, false)});
  admission::CycleCache cache;
  admission::CycleOptions options;
  options.cache = &cache;
  kube::TrainingJob job = Nameless("");
  job.status.admission =
      kube::TrainingJobAdmission{.cluster_queue = "team-a", .flavor = "h100", .replicas = 4};
  job.replicas = 4;
  absl::StatusOr<admission::Workload> running = WorkloadFromJob(job, 1, false, "");
  ASSERT_THAT(running, IsOk());
  running->admitted.reset();
  queue.Running(*running);  // no default: priority 0, all 32 GPUs
  admission::CycleResult first = queue.world.Cycle(options);
  EXPECT_THAT(first.preemptions, IsEmpty());
  // standard becomes the default: the same job object is now at 1000.
  admission::Workload* w = queue.world.Find("team-a/nameless");
  ASSERT_NE(w, nullptr);
  const admission::Workload again = *WorkloadFromJob(job, 1, false, "standard");
  w->priority_class = again.priority_class;
  w->priority = again.priority;
  w->revision = again.revision;
  admission::Workload preemptor = Job("team-a/preemptor", 2, 8, 0, 2);
  preemptor.priority_class = "low";
  queue.world.Add(preemptor);
  EXPECT_THAT(queue.world.Cycle(options).preemptions, IsEmpty());  // 100 < 1000
}

// ---- After admission: the Kubernetes pod rule (KeepPodsPriority) ---------------------------

std::shared_ptr<const kube::Pod> PodAt(int32_t priority, bool deleting = false) {
  auto pod = std::make_shared<kube::Pod>();
  pod->priority = priority;
  if (deleting) pod->meta.deletion_timestamp = kube::InternedString("2026-11-30T12:05:00Z");
  return pod;
}

kube::TrainingJob Admitted(kube::TrainingJob job) {
  job.status.admission =
      kube::TrainingJobAdmission{.cluster_queue = "team-a", .flavor = "h100", .replicas = 2};
  return job;
}

// Its pods were created before the default existed (priority 0); the default made since does
// not change them, nor the job: it stays at its pods' priority.
TEST(KeepPodsPriorityTest, AnAdmittedJobWithoutAClassKeepsItsPodsPriority) {
  const kube::TrainingJob job = Admitted(Nameless(""));
  admission::Workload w = *WorkloadFromJob(job, 1, false, "standard");
  ASSERT_EQ(w.priority_class, "standard");
  KeepPodsPriority(job, {PodAt(0), PodAt(0)}, false, w);
  EXPECT_EQ(w.priority_class, "");
  EXPECT_EQ(w.priority, 0);
  // A rank recreated since (a node failure) got the default: the gang is at its lowest pod.
  w = *WorkloadFromJob(job, 1, false, "standard");
  KeepPodsPriority(job, {PodAt(1000), PodAt(0)}, false, w);
  EXPECT_EQ(w.priority, 0);
  // Pods being deleted do not count; without live pods the default of now holds.
  w = *WorkloadFromJob(job, 1, false, "standard");
  KeepPodsPriority(job, {PodAt(0, /*deleting=*/true)}, false, w);
  EXPECT_EQ(w.priority_class, "standard");
  KeepPodsPriority(job, {}, false, w);
  EXPECT_EQ(w.priority_class, "standard");
}

TEST(KeepPodsPriorityTest, NamedClassesPendingJobsAndExplicitPrioritiesAreLeftAlone) {
  admission::Workload w = *WorkloadFromJob(Admitted(Nameless("low")), 1, false, "standard");
  KeepPodsPriority(Admitted(Nameless("low")), {PodAt(0)}, false, w);
  EXPECT_EQ(w.priority_class, "low");
  w = *WorkloadFromJob(Nameless(""), 0, false, "standard");  // not admitted
  KeepPodsPriority(Nameless(""), {PodAt(0)}, false, w);
  EXPECT_EQ(w.priority_class, "standard");
  kube::TrainingJob explicit_priority = Admitted(Nameless(""));
  explicit_priority.priority = 5;
  w = *WorkloadFromJob(explicit_priority, 1, true, "standard");
  KeepPodsPriority(explicit_priority, {PodAt(0)}, true, w);
  EXPECT_EQ(w.priority, 5);
}

// The running job without a class, admitted before the default existed, is preempted by a job
// of class low (100) though the default (1000) is above it: its pods run at 0.
TEST(KeepPodsPriorityTest, ARunningJobWhosePodsPredateTheDefaultIsPreemptedAtTheirPriority) {
  const std::vector<PriorityClass> classes = {Decode("low", 100, false),
                                              Decode("standard", 1000, true)};
  TeamQueue queue(classes);
  kube::TrainingJob running = Admitted(Nameless(""));
  absl::StatusOr<admission::Workload> w =
      WorkloadFromJob(running, 1, false, GlobalDefaultPriorityClass(classes));
  ASSERT_THAT(w, IsOk());
  KeepPodsPriority(running, {PodAt(0), PodAt(0)}, false, *w);
  w->admitted.reset();
  w->count = 4;  // it holds all 32 GPUs
  queue.Running(*w);
  admission::Workload preemptor = Job("team-a/preemptor", 2, 8, 0, 1);
  preemptor.priority_class = "low";
  queue.world.Add(preemptor);
  EXPECT_THAT(Victims(queue.world.Cycle()), ElementsAre("team-a/nameless"));
}

}  // namespace
}  // namespace phalanx::operator_server
