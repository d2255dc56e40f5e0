#include "sim/trace.h"

#include <numeric>

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/sim/sim_test_util.h"

namespace phalanx::sim {
namespace {

using ::phalanx::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(TraceTest, ParsesCsvWithHeaderNamedColumnsAndSortsBySubmit) {
  const std::string csv =
      "name,submit_s,queue,priority,pods,gpus_per_pod,duration_s,elastic_min,elastic_max,"
      "required_level,preferred_level\n"
      "b,60,q,100,4,8,3600,2,4,layer-2,layer-3\n"
      "# a comment\n"
      "a,0,q,10,1,1,120,,,,\n";
  ASSERT_OK_AND_ASSIGN(std::vector<TraceJob> jobs, ParseCsvTrace(csv, "t.csv"));
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].name, "a");
  EXPECT_EQ(jobs[1].elastic_min, 2);
  EXPECT_EQ(jobs[1].required_level, "topology.k8s.aws/network-node-layer-2");
  EXPECT_EQ(jobs[1].preferred_level, "topology.k8s.aws/network-node-layer-3");
  EXPECT_EQ(jobs[1].origin, "t.csv:2");
}

// '#' starts a whole-line comment, before the header or among the rows, and blank lines are
// skipped; but a '#' line with a row's cells is refused with its line, since it may be a job
// named "#exp1" that was once dropped without a word.
TEST(TraceTest, CommentsAreWholeLinesAndNeverHideARow) {
  ASSERT_OK_AND_ASSIGN(std::vector<TraceJob> jobs,
                       ParseCsvTrace("# trace of 2026-11-30\n\n"
                                     "name,submit_s,queue,pods,duration_s\n"
                                     "# two, rows\n  \na,0,q,1,60\n#\n",
                                     "t.csv"));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].origin, "t.csv:6");
  absl::StatusOr<std::vector<TraceJob>> hidden = ParseCsvTrace(
      "name,submit_s,queue,pods,duration_s\n#exp1,0,q,1,60\nb,0,q,1,60\n", "t.csv");
  ASSERT_FALSE(hidden.ok());
  EXPECT_EQ(hidden.status().message(),
            "t.csv:2: a comment line with a row's 5 cells: a job name may not start with '#'; "
            "remove the line or its commas");
}

// A job of pods without GPUs is a TrainingJob the CRD accepts (it has no rule on a pod's
// requests: the template is a PodSpec the API server validates as pods), so a trace takes it
// too, in both formats; it holds at most 110 pods per node (the kubelet's default) and no GPU
// quota. A negative count is refused with its line and field.
TEST(TraceTest, AJobWithoutGpusIsAcceptedANegativeCountIsNot) {
  ASSERT_OK_AND_ASSIGN(
      std::vector<TraceJob> jobs,
      ParseCsvTrace("name,submit_s,queue,pods,gpus_per_pod,duration_s\ncpu,0,q,4,0,60\n", "t.csv"));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].gpus_per_pod, 0);
  ASSERT_OK_AND_ASSIGN(jobs, ParseYamlTrace("jobs:\n- {queue: q, pods: 4, gpusPerPod: 0, "
                                            "duration: 60}\n",
                                            "t.yaml"));
  EXPECT_EQ(jobs[0].gpus(), 0);
  absl::StatusOr<std::vector<TraceJob>> bad =
      ParseCsvTrace("name,submit_s,queue,pods,gpus_per_pod,duration_s\ncpu,0,q,4,-1,60\n", "t.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("t.csv:2: gpusPerPod: must be >= 0"));
}

TEST(TraceTest, CsvErrorsNameLineAndColumn) {
  absl::StatusOr<std::vector<TraceJob>> jobs =
      ParseCsvTrace("submit_s,queue,pods,duration_s\n0,q,two,60\n", "t.csv");
  ASSERT_FALSE(jobs.ok());
  EXPECT_THAT(std::string(jobs.status().message()),
              HasSubstr("t.csv:2: pods: want an integer, got \"two\""));
  jobs = ParseCsvTrace("submit_s,queue,pods\n", "t.csv");
  EXPECT_THAT(std::string(jobs.status().message()), HasSubstr("missing column \"duration_s\""));
}

// RFC 4180 quoting, as spreadsheets and --jobs-out write it (sim/csv.h): every cell quoted
// reads as unquoted, and a quoted comma is one cell, not a sixth column.
TEST(TraceTest, CsvCellsMayBeQuoted) {
  ASSERT_OK_AND_ASSIGN(std::vector<TraceJob> jobs,
                       ParseCsvTrace("\"name\",\"submit_s\",\"queue\",\"pods\",\"duration_s\"\n"
                                     "\"pretrain\",\"0\",\"team-a\",\"4\",\"60\"\n",
                                     "t.csv"));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].name, "pretrain");
  EXPECT_EQ(jobs[0].pods, 4);
  ASSERT_OK_AND_ASSIGN(jobs, ParseCsvTrace("name,submit_s,queue,pods,duration_s\n"
                                           "a,0,\"q\",1,\" 60 \"\n"
                                           "  \"b\" ,5,q,2,60\n",
                                           "t.csv"));
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].duration_s, 60);
  EXPECT_EQ(jobs[1].name, "b");
  EXPECT_EQ(jobs[1].origin, "t.csv:3");
  EXPECT_THAT(ParseCsvTrace("name,submit_s,queue,pods,duration_s\n\"a,0,q,1,60\n", "t.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("t.csv:2: cell 1: its opening '\"' is never closed")));
}

TEST(TraceTest, ParsesYamlAndNamesLineAndFieldOnErrors) {
  const std::string yaml = R"(jobs:
- name: llama
  submit: 10
  queue: q
  pods: 16
  duration: 7200
  elastic: {min: 8, max: 16, step: 8}
  topology: {required: layer-2, groupSize: 4, groupLevel: layer-3}
)";
  ASSERT_OK_AND_ASSIGN(std::vector<TraceJob> jobs, ParseYamlTrace(yaml, "t.yaml"));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].gpus_per_pod, 8);
  EXPECT_EQ(jobs[0].group_size, 4);
  EXPECT_EQ(jobs[0].elastic_max, 16);
  absl::StatusOr<std::vector<TraceJob>> bad =
      ParseYamlTrace("jobs:\n- queue: q\n  duration: 60\n  pods: -1\n", "t.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("t.yaml:2: jobs[0]: pods: must be >= 1"));
  bad = ParseYamlTrace("jobs:\n- queue: q\n  duration: soon\n", "t.yaml");
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("t.yaml:3: jobs[0].duration: want a number"));
}

// The CSV row from issue 13: 4 pods, elastic 2..4 in steps of 2, in tensor-parallel groups of
// 4 per clique. A 2-pod size can never hold a group of 4, so the CRD (and `phalanx plan`)
// reject this job; the loader does too, naming the line.
TEST(TraceTest, LoaderRejectsAShapeTheCrdRejects) {
  const std::string header =
      "name,submit_s,queue,pods,gpus_per_pod,duration_s,elastic_min,elastic_max,elastic_step,"
      "required_level,preferred_level,group_size,group_level\n";
  absl::StatusOr<std::vector<TraceJob>> jobs = ParseCsvTrace(
      header + "ok,0,all,4,4,3600,4,4,2,layer-3,clique,2,clique\n"
               "g,0,all,4,4,3600,2,4,2,layer-3,clique,4,clique\n",
      "g.csv");
  ASSERT_FALSE(jobs.ok());
  EXPECT_THAT(std::string(jobs.status().message()),
              HasSubstr("g.csv:3: topology.groupSize must divide elastic.min, elastic.max and "
                        "elastic.step (4 does not divide 2)"));
  jobs = ParseCsvTrace(header + "p,0,all,4,4,3600,,,,layer-3,layer-1,,\n", "p.csv");
  EXPECT_THAT(std::string(jobs.status().message()),
              HasSubstr("p.csv:2: topology.preferred (topology.k8s.aws/network-node-layer-1) must "
                        "not be coarser than topology.required"));
  absl::StatusOr<std::vector<TraceJob>> yaml = ParseYamlTrace(
      "jobs:\n- queue: q\n  duration: 60\n  pods: 6\n  elastic: {min: 3, max: 6, step: 2}\n",
      "t.yaml");
  EXPECT_THAT(std::string(yaml.status().message()),
              HasSubstr("t.yaml:2: jobs[0]: elastic.min and elastic.max must be multiples of "
                        "elastic.step"));
}

// Each job is a Workload named after it in a queue that is a ClusterTrainingQueue: names
// Kubernetes would refuse are bad input with their line, in both formats, and shown escaped.
TEST(TraceTest, JobAndQueueNamesAreKubernetesNames) {
  const std::string header = "name,submit_s,queue,pods,duration_s\n";
  ASSERT_OK_AND_ASSIGN(std::vector<TraceJob> jobs,
                       ParseCsvTrace(header + "llama.70b-1,0,team-a.prod,1,60\n", "t.csv"));
  EXPECT_EQ(jobs[0].name, "llama.70b-1");
  const std::string kRule =
      " must be lowercase letters, digits, '-' and '.', each '.'-separated part starting and "
      "ending with a letter or digit (a DNS-1123 subdomain): ";
  EXPECT_THAT(ParseCsvTrace(header + "ok,0,q,1,60\n\"a,b\",0,q,1,60\n", "t.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("t.csv:3: name: \"a,b\"" + kRule +
                                 "the job is a Workload of that name")));
  EXPECT_THAT(ParseCsvTrace(header + "ok,0,Team_A,1,60\n", "t.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("t.csv:2: queue: \"Team_A\"" + kRule +
                                 "the queue is a ClusterTrainingQueue of that name")));
  const absl::StatusOr<std::vector<TraceJob>> bel = ParseYamlTrace(
      "jobs:\n- {name: \"x\\ay\", queue: q, duration: 60}\n", "t.yaml");
  EXPECT_THAT(bel, StatusIs(absl::StatusCode::kInvalidArgument,
                            HasSubstr("t.yaml:2: jobs[0]: name: \"x\\x07y\"" + kRule)));
  EXPECT_THAT(std::string(bel.status().message()), Not(HasSubstr("\a")));
  EXPECT_THAT(ParseYamlTrace("jobs:\n- {name: " + std::string(300, 'a') +
                                 ", queue: q, duration: 60}\n",
                             "t.yaml"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("name: (300 characters) must be at most 253 characters")));
}

// The loaders sort jobs by submit time; a refusal still names the first bad row of the file
// (audit 2026-11-30 sim, F13: rows at 500, 100 and 0 s named line 4).
TEST(TraceTest, ValidateNamesTheFirstBadRowOfTheFileNotTheEarliestSubmit) {
  ClusterModel cluster = testing::SmallCluster(16);
  ASSERT_OK_AND_ASSIGN(std::vector<TraceJob> jobs,
                       ParseCsvTrace("name,submit_s,queue,pods,gpus_per_pod,duration_s\n"
                                     "a,500,prod,1,8,60\nb,100,prod,1,8,60\nc,0,prod,1,8,60\n",
                                     "ooo.csv"));
  ASSERT_EQ(jobs.front().name, "c");  // sorted by submit
  EXPECT_THAT(ValidateTrace(jobs, cluster),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ooo.csv:2: queue: job a: no queue named \"prod\"")));
}

TEST(TraceTest, ValidateRejectsUnknownQueueAndImpossibleGangs) {
  ClusterModel cluster = testing::SmallCluster(16);
  std::vector<TraceJob> jobs = {testing::Gang("x", 2, 8)};
  jobs[0].queue = "nope";
  EXPECT_THAT(std::string(ValidateTrace(jobs, cluster).message()), HasSubstr("no queue named"));
  jobs = {testing::Gang("x", 17, 8)};
  jobs[0].origin = "t.csv:3";
  EXPECT_THAT(std::string(ValidateTrace(jobs, cluster).message()),
              HasSubstr("t.csv:3: job x can never be placed: 17 pods of 8 GPUs: at most 16 fit "
                        "in its 16 nodes (--allow-unplaceable runs it anyway"));
  // Allowed: kept, with its reason, for the run to count apart.
  EXPECT_OK(ValidateTrace(jobs, cluster, /*allow_unplaceable=*/true));
  EXPECT_EQ(jobs[0].unplaceable, "17 pods of 8 GPUs: at most 16 fit in its 16 nodes");
  jobs = {testing::Gang("x", 2, 8)};
  jobs[0].required_level = "nvidia.com/gpu.clique";
  EXPECT_THAT(std::string(ValidateTrace(jobs, cluster).message()), HasSubstr("no topology level"));
}

// A trace that does not give gpus_per_pod means a whole node: 4 GPUs on GB200 (audit 32: a
// default of 8 refused every such job on a GB200 cluster); a job built in code keeps its own.
TEST(TraceTest, GpusPerPodNotGivenIsAWholeNodesGpus) {
  ClusterModel gb200 = testing::Gb200Cluster(18, {1, 1, 1, 18});
  ASSERT_OK_AND_ASSIGN(std::vector<TraceJob> jobs,
                       ParseCsvTrace("name,submit_s,queue,pods,duration_s\na,0,all,2,60\n",
                                     "t.csv"));
  ASSERT_OK(ValidateTrace(jobs, gb200));
  EXPECT_EQ(jobs[0].gpus_per_pod, 4);
  ASSERT_OK_AND_ASSIGN(jobs, ParseCsvTrace("name,submit_s,queue,pods,gpus_per_pod,duration_s\n"
                                           "a,0,all,2,,60\nb,0,all,2,2,60\n",
                                           "t.csv"));
  ASSERT_OK(ValidateTrace(jobs, gb200));
  EXPECT_EQ(jobs[0].gpus_per_pod, 4);  // an empty cell is not given
  EXPECT_EQ(jobs[1].gpus_per_pod, 2);
  ASSERT_OK_AND_ASSIGN(jobs, ParseYamlTrace("jobs:\n- {queue: all, pods: 2, duration: 60}\n",
                                            "t.yaml"));
  ASSERT_OK(ValidateTrace(jobs, gb200));
  EXPECT_EQ(jobs[0].gpus_per_pod, 4);
  std::vector<TraceJob> coded = {testing::Gang("x", 2, 8)};
  coded[0].queue = "all";
  EXPECT_FALSE(ValidateTrace(coded, gb200).ok());  // 8 GPUs on a 4-GPU node: its own count
}

// Node groups of different GPUs per node (sim/examples/cluster.yaml: h100 with 8, gb200 with 4):
// not given, a job must name its group.
TEST(TraceTest, GpusPerPodNotGivenOnMixedNodesNeedsTheNodeGroup) {
  ASSERT_OK_AND_ASSIGN(ClusterSpec spec,
                       LoadClusterSpec(std::string(PHALANX_SOURCE_DIR) +
                                       "/sim/examples/cluster.yaml"));
  ASSERT_OK_AND_ASSIGN(ClusterModel cluster, BuildCluster(spec));
  ASSERT_OK_AND_ASSIGN(std::vector<TraceJob> jobs,
                       ParseCsvTrace("name,submit_s,queue,pods,duration_s,node_group\n"
                                     "a,0,research,2,60,\nb,0,pretraining,2,60,gb200\n",
                                     "t.csv"));
  EXPECT_THAT(std::string(ValidateTrace(jobs, cluster).message()),
              HasSubstr("t.csv:2: gpusPerPod: job a: not given, and its nodes do not all have "
                        "the same GPUs (4, 8): give it, or the job's node group"));
  jobs.erase(jobs.begin());
  ASSERT_OK(ValidateTrace(jobs, cluster));
  EXPECT_EQ(jobs[0].gpus_per_pod, 4);
}

// A job no policy could ever start, even alone on the empty cluster, for each reason the issue
// names: size, TP groups, required level, quota; and the near misses that do fit.
TEST(TraceTest, UnplaceableReasonNamesWhyAJobCanNeverRun) {
  ClusterModel small = testing::SmallCluster(16);  // layer-3 blocks of 4 nodes, 8 GPUs each
  TraceJob job = testing::Gang("x", 16, 8);
  EXPECT_EQ(UnplaceableReason(job, small), "");
  job.pods = 17;
  EXPECT_EQ(UnplaceableReason(job, small), "17 pods of 8 GPUs: at most 16 fit in its 16 nodes");
  job = testing::Gang("x", 1, 16);
  EXPECT_EQ(UnplaceableReason(job, small), "a pod of 16 GPUs does not fit a node of 8");
  job = testing::Gang("x", 8, 4);  // 8 half-node pods fit one block of 4 nodes
  job.required_level = testing::kLayer3;
  EXPECT_EQ(UnplaceableReason(job, small), "");
  job.gpus_per_pod = 8;
  EXPECT_EQ(UnplaceableReason(job, small),
            "8 pods of 8 GPUs: at most 4 fit in one topology.k8s.aws/network-node-layer-3 domain "
            "(required)");
  job.elastic_min = 4;  // elastic: its smallest size is what must fit
  job.elastic_max = 8;
  job.elastic_step = 4;
  EXPECT_EQ(UnplaceableReason(job, small), "");

  // Issue 13: 68 pods in TP groups of 4 per NVL72 clique of 18 nodes: each clique holds 4
  // groups (16 nodes), so 4 cliques hold 64 pods; 64 fit, 68 never do.
  ClusterModel cliques = testing::Gb200Cluster(72, {1, 1, 4, 18});
  job = testing::Gang("big", 64, 4);
  job.queue = "all";
  job.group_size = 4;
  job.group_level = "nvidia.com/gpu.clique";
  EXPECT_EQ(UnplaceableReason(job, cliques), "");
  job.pods = 68;
  EXPECT_EQ(UnplaceableReason(job, cliques),
            "68 pods in groups of 4, each inside one nvidia.com/gpu.clique domain: at most 64 fit "
            "in its 72 nodes");
  // Groups on one node: 4 GPUs per node hold 2 pods of 2 GPUs, so groups of 4 never fit.
  job = testing::Gang("tp", 4, 2);
  job.queue = "all";
  job.group_size = 4;
  job.group_level = "kubernetes.io/hostname";
  EXPECT_THAT(UnplaceableReason(job, cliques), HasSubstr("at most 0 fit"));
  job.group_size = 2;
  EXPECT_EQ(UnplaceableReason(job, cliques), "");
}

// Quota by Kueue's rules: a queue uses only the flavors it lists, and borrows from its cohort up
// to its borrowingLimit and the others' lendingLimit.
TEST(TraceTest, UnplaceableWhenNoQueueQuotaCanEverHoldTheGang) {
  ClusterSpec spec = testing::SmallCluster(16).spec;  // queue q: all 128 GPUs of p5
  QueueSpec lender = spec.queues[0];
  lender.name = "lender";
  lender.cohort = "c";
  lender.flavors[0].nominal = {{"nvidia.com/gpu", 96}};
  lender.flavors[0].lending_limit = ResourceList{{"nvidia.com/gpu", 48}};
  QueueSpec borrower = lender;
  borrower.name = "borrower";
  borrower.flavors[0].nominal = {{"nvidia.com/gpu", 16}};
  borrower.flavors[0].lending_limit.reset();
  borrower.flavors[0].borrowing_limit = ResourceList{{"nvidia.com/gpu", 32}};
  QueueSpec other = lender;  // lists no p5 flavor at all
  other.name = "other";
  other.flavors[0].flavor = "h200";
  spec.queues = {lender, borrower, other};
  ASSERT_OK_AND_ASSIGN(ClusterModel cluster, BuildCluster(spec));
  EXPECT_EQ(ReachableGpus(cluster.spec, cluster.spec.queues[0], "p5"), 96 + 16);
  EXPECT_EQ(ReachableGpus(cluster.spec, cluster.spec.queues[1], "p5"), 16 + 32);
  EXPECT_EQ(ReachableGpus(cluster.spec, cluster.spec.queues[2], "p5"), 0);
  TraceJob job = testing::Gang("x", 6, 8);
  job.queue = "borrower";
  EXPECT_EQ(UnplaceableReason(job, cluster), "");
  job.pods = 7;
  EXPECT_EQ(UnplaceableReason(job, cluster),
            "queue borrower can hold at most 48 GPUs of it (nominal quota plus what its cohort "
            "lends), the job needs 56");
  job.queue = "other";
  job.pods = 1;
  EXPECT_EQ(UnplaceableReason(job, cluster),
            "queue other has no GPU quota for it (nominal, or borrowable in its cohort)");
}

// The shipped mixed cluster: team "research" has quota only for the h100 group. The generator
// used to send its jobs to the GB200 group too, where they could never start (245 of 3,000 on
// seed 1, every policy); now it only draws groups a team's queue can hold.
TEST(TraceTest, GeneratorOnlyEmitsJobsTheirQueueCanRun) {
  ASSERT_OK_AND_ASSIGN(ClusterSpec spec, LoadClusterSpec(std::string(PHALANX_SOURCE_DIR) +
                                                         "/sim/examples/cluster.yaml"));
  ASSERT_OK_AND_ASSIGN(ClusterModel cluster, BuildCluster(spec));
  std::vector<TraceJob> jobs = GenerateTrace(cluster, {.jobs = 3000, .seed = 1});
  int research = 0, gb200 = 0;
  for (const TraceJob& job : jobs) {
    if (job.queue == "research") {
      ++research;
      EXPECT_EQ(job.node_group, "h100") << job.name;
    }
    gb200 += job.node_group == "gb200";
  }
  EXPECT_GT(research, 500);  // both teams and both groups are drawn, not one
  EXPECT_GT(gb200, 300);
  EXPECT_OK(ValidateTrace(jobs, cluster));
}

TEST(TraceTest, GeneratorIsDeterministicAndShapedLikePublishedTraces) {
  ASSERT_OK_AND_ASSIGN(ClusterModel cluster, BuildCluster(DefaultClusterSpec()));
  const std::vector<TraceJob> a = GenerateTrace(cluster, {.jobs = 3000, .seed = 4});
  const std::vector<TraceJob> b = GenerateTrace(cluster, {.jobs = 3000, .seed = 4});
  const std::vector<TraceJob> c = GenerateTrace(cluster, {.jobs = 3000, .seed = 5});
  ASSERT_EQ(a.size(), 3000u);
  int small = 0, differ = 0;
  double multi_gpu_s = 0, all_gpu_s = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].submit_s, b[i].submit_s);
    EXPECT_EQ(a[i].pods, b[i].pods);
    differ += a[i].duration_s != c[i].duration_s;
    if (i > 0) {
      EXPECT_GE(a[i].submit_s, a[i - 1].submit_s);
    }
    small += a[i].pods == 1;
    const double gpu_s = a[i].duration_s * a[i].gpus();
    all_gpu_s += gpu_s;
    if (a[i].pods > 1) multi_gpu_s += gpu_s;
  }
  EXPECT_GT(differ, 2900);
  EXPECT_GT(small, 1500);                   // most jobs are single-pod
  EXPECT_GT(multi_gpu_s / all_gpu_s, 0.6);  // most GPU-time is in multi-node jobs
  std::vector<TraceJob> checked = a;
  EXPECT_OK(ValidateTrace(checked, cluster));
}

// On GB200 the generator gives gangs tensor-parallel groups inside a clique. A group size must
// divide every size an elastic gang can take (its minimum and step), not only its full size, or
// the job can never run below full size: every generated job passes the shape validator.
TEST(TraceTest, GeneratedGb200JobsPassTheShapeValidator) {
  ClusterModel cluster = testing::Gb200Cluster(144, {2, 2, 2, 18});
  std::vector<TraceJob> jobs = GenerateTrace(cluster, {.jobs = 3000, .seed = 2});
  int elastic_grouped = 0;
  for (const TraceJob& job : jobs) {
    if (job.elastic() && job.group_size > 0) {
      ++elastic_grouped;
      EXPECT_EQ(job.elastic_min % job.group_size, 0) << job.name;
      EXPECT_EQ(job.elastic_step % job.group_size, 0) << job.name;
    }
  }
  EXPECT_GT(elastic_grouped, 20);  // the rule is exercised, not vacuous
  EXPECT_OK(ValidateTrace(jobs, cluster));
}

}  // namespace
}  // namespace phalanx::sim
