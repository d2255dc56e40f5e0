// The `phalanx` binary as a user runs it: exit codes and messages.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct CliRun {
  int code = -1;
  std::string output;  // stdout and stderr
};

CliRun Phalanx(const std::string& args) {
  CliRun run;
  const std::string command = std::string(PHALANX_CLI_PATH) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    run.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  run.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(CliTest, SimulateBadClusterIsExit2WithFileLineAndField) {
  const std::string path = WriteFile("bad-cluster.yaml",
                                     "nodeGroups:\n- instanceType: p5.48xlarge\n  count: lots\n"
                                     "queues:\n- name: q\n  nominalQuota: {nvidia.com/gpu: 8}\n");
  CliRun run = Phalanx("simulate --cluster " + path);
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.output, HasSubstr(path + ":3: nodeGroups[0].count: want an integer"));
  const std::string typo = WriteFile("typo-cluster.yaml",
                                     "nodeGroups:\n- instanceType: p5.48xlarge\n  count: 4\n"
                                     "queues:\n- name: q\n  nominalQuota: {nvidia.com/gpus: 8}\n");
  run = Phalanx("simulate --cluster " + typo);
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.output, HasSubstr(typo + ":6: queues[0].nominalQuota.nvidia.com/gpus: unknown "
                                           "resource \"nvidia.com/gpus\""));
}

TEST(CliTest, SimulateBadTraceAndFlagsAreExit2) {
  const std::string trace = WriteFile("bad.csv", "submit_s,queue,pods,duration_s\n0,team-a,x,60\n");
  CliRun run = Phalanx("simulate --trace " + trace);
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.output, HasSubstr(trace + ":2: pods: want an integer"));
  EXPECT_EQ(Phalanx("simulate --nodes many").code, 2);
  EXPECT_EQ(Phalanx("simulate --policy slurm").code, 2);
  EXPECT_EQ(Phalanx("simulate --frobnicate").code, 2);
}

TEST(CliTest, SimulateSmallRunPrintsJson) {
  CliRun run = Phalanx("simulate --nodes 16 --jobs 50 --policy phalanx,kueue-tas --json");
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("\"policy\":\"phalanx\""));
  EXPECT_THAT(run.output, HasSubstr("\"partial_gang_events\":0"));
}

TEST(CliTest, SimulateWritesOneCsvRowPerJobAndPolicy) {
  const std::string path = ::testing::TempDir() + "jobs-out.csv";
  std::filesystem::remove(path);
  CliRun run = Phalanx("simulate --nodes 16 --jobs 50 --policy phalanx,kueue-tas --jobs-out " +
                       path);
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("jobs written to " + path));
  std::ifstream file(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(file, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 1u + 2 * 50);
  EXPECT_THAT(lines[0], HasSubstr("policy,job,queue,submit_s,start_s,end_s,wait_s"));
  EXPECT_THAT(lines[1], ::testing::StartsWith("phalanx,job-000000,"));
  EXPECT_THAT(lines[51], ::testing::StartsWith("kueue-tas,job-000000,"));
  // Checked before the run, like --report.
  run = Phalanx("simulate --jobs-out " + ::testing::TempDir());
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.output, HasSubstr("--jobs-out: "));
}

// A trace in Unix seconds (its first job 1.7e9 s after 0): the report charts its own span,
// without a slice per 0.1 % of 1.7e9 s (which aborted the run with std::length_error).
TEST(CliTest, ReportOfATraceInUnixSeconds) {
  const std::string trace = WriteFile("epoch.csv", "name,submit_s,queue,pods,duration_s\n"
                                                   "j1,1700000000,team-a,2,60\n"
                                                   "j2,1700000010,team-a,1,60\n");
  const std::string html = ::testing::TempDir() + "epoch.html";
  std::filesystem::remove(html);
  CliRun run = Phalanx("simulate --nodes 16 --trace " + trace + " --report " + html);
  EXPECT_EQ(run.code, 0) << run.output;
  std::ifstream file(html);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("GPU utilization over time"));
}

// A job still running at the safety stop (365 days after the last submission) is counted as
// unfinished, said on stderr, and its GPUs are busy up to the stop: the whole cluster here.
TEST(CliTest, JobsRunningAtTheSafetyStopAreCountedAndTheirGpusBusy) {
  const std::string trace = WriteFile("long.csv", "name,submit_s,queue,pods,duration_s\n"
                                                  "first,0,team-a,16,25920000\n"
                                                  "second,0,team-a,16,31536000\n");
  CliRun run = Phalanx("simulate --nodes 16 --policy phalanx,kueue-tas --json --trace " + trace);
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("\"jobs_completed\":1,\"jobs_never_started\":0,"
                                    "\"jobs_unfinished\":1"));
  EXPECT_THAT(run.output, HasSubstr("\"gpu_utilization\":1.0,"));
  EXPECT_THAT(run.output, HasSubstr("1 of 2 jobs started under phalanx had not finished at the "
                                    "safety stop"));
}

// Checked when loaded, whichever policies run: the queues by the admission core's rules, job
// names per queue. A preferred level that only some node groups have does not refuse a job that
// may run in any group (the mixed scenario's p5 group has no layer-4).
TEST(CliTest, InputsAreValidOrNotWhateverThePolicies) {
  const std::string cluster = WriteFile(
      "weight.yaml",
      "nodeGroups:\n- {name: h, instanceType: p5.48xlarge, count: 4}\n"
      "queues:\n- {name: a, nominalQuota: {nvidia.com/gpu: 8}, fairSharing: {weight: -1}}\n");
  CliRun run = Phalanx("simulate --cluster " + cluster + " --jobs 5 --policy first-fit");
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.output, HasSubstr(cluster + ": queues: ClusterTrainingQueue a: "));
  const std::string dup = WriteFile("dup.csv", "name,submit_s,queue,pods,duration_s\n"
                                               "j,0,team-a,1,60\nj,5,team-a,1,60\n");
  run = Phalanx("simulate --nodes 16 --policy first-fit --trace " + dup);
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.output, HasSubstr(dup + ":3: name: job j: another job of queue \"team-a\""));
  const std::string preferred = WriteFile("l4.csv", "name,submit_s,queue,pods,duration_s,"
                                                    "preferred_level\nx,0,team-a,2,10,layer-4\n");
  run = Phalanx("simulate --scenario mixed --trace " + preferred);
  EXPECT_EQ(run.code, 0) << run.output;
  const std::string required = WriteFile("r4.csv", "name,submit_s,queue,pods,duration_s,"
                                                   "required_level\nx,0,team-a,2,10,layer-4\n");
  run = Phalanx("simulate --scenario mixed --trace " + required);
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.output, HasSubstr("has no topology level"));
}

// CSV as spreadsheets write it: a byte order mark, an upper-case extension; a column given
// twice, a header without rows and times out of range are refused with the line named.
TEST(CliTest, CsvQuirksAndTimeBounds) {
  const std::string bom =
      WriteFile("BOM.CSV", "\xEF\xBB\xBFname,submit_s,queue,pods,duration_s\nj,0,team-a,1,60\n");
  CliRun run = Phalanx("simulate --nodes 16 --policy phalanx --trace " + bom);
  EXPECT_EQ(run.code, 0) << run.output;
  const std::string twice =
      WriteFile("twice.csv", "name,submit_s,queue,pods,duration_s,pods\nj,0,team-a,1,60,2\n");
  run = Phalanx("simulate --nodes 16 --trace " + twice);
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.output, HasSubstr(twice + ":1: header: column \"pods\" appears twice"));
  const std::string header = WriteFile("header.csv", "name,submit_s,queue,pods,duration_s\n");
  run = Phalanx("simulate --nodes 16 --trace " + header);
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.output, HasSubstr("the trace has a header but no jobs"));
  const std::string far = WriteFile("far.csv", "name,submit_s,queue,pods,duration_s\n"
                                               "j,1e300,team-a,1,60\n");
  run = Phalanx("simulate --nodes 16 --trace " + far);
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.output, HasSubstr(far + ":2: submit: must be 0 to 100000000000 seconds"));
  const std::string inf =
      WriteFile("inf.yaml", "jobs:\n- {queue: team-a, pods: 1, duration: .inf}\n");
  run = Phalanx("simulate --nodes 16 --trace " + inf);
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.output, HasSubstr("want a finite number"));
}

// Outputs never replace inputs or each other; a policy is named once.
TEST(CliTest, SimulateRefusesOutputsOverInputsAndRepeatedPolicies) {
  const std::string trace = WriteFile("in.csv", "name,submit_s,queue,pods,duration_s\n"
                                                "j1,0,team-a,2,60\n");
  CliRun run = Phalanx("simulate --nodes 16 --trace " + trace + " --jobs-out " + trace);
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.output, HasSubstr("--jobs-out and --trace name the same file"));
  std::ifstream file(trace);
  std::string first;
  std::getline(file, first);
  EXPECT_EQ(first, "name,submit_s,queue,pods,duration_s");  // untouched
  const std::string out = ::testing::TempDir() + "out.html";
  run = Phalanx("simulate --nodes 16 --jobs 10 --report " + out + " --jobs-out " +
                ::testing::TempDir() + "./out.html");
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.output, HasSubstr("--jobs-out and --report name the same file"));
  run = Phalanx("simulate --nodes 16 --jobs 10 --policy phalanx,kueue-tas,phalanx");
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.output, HasSubstr("--policy: \"phalanx\" is listed twice"));
  EXPECT_EQ(Phalanx("simulate --nodes 16 --jobs 10 --policy ,,").code, 2);
  run = Phalanx("simulate --nodes 1");
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.output, HasSubstr("--nodes: "));
  EXPECT_THAT(run.output, HasSubstr("2 to 100000"));
}

// --fair-sharing reaches Phalanx's admission (Kueue's fairSharing.enable) and nothing else: the
// baselines' results are the same with it on and off.
// --fair-sharing switches Kueue's fair sharing for every policy at once: Phalanx's admission
// core and the baselines' shared quota book (docs/baselines.md "Fair sharing").
TEST(CliTest, SimulateFairSharingChangesEveryPolicy) {
  const std::string run = "simulate --nodes 32 --jobs 300 --policy phalanx,kueue-tas --json";
  CliRun off = Phalanx(run + " --fair-sharing off");
  CliRun on = Phalanx(run + " --fair-sharing on");
  ASSERT_EQ(off.code, 0) << off.output;
  ASSERT_EQ(on.code, 0) << on.output;
  auto split = [](const std::string& out) {
    const size_t phalanx = out.find("{\"policy\":\"phalanx\"");
    const size_t kueue = out.find("{\"policy\":\"kueue-tas\"");
    EXPECT_NE(phalanx, std::string::npos) << out;
    EXPECT_NE(kueue, std::string::npos) << out;
    EXPECT_LT(phalanx, kueue);
    return std::pair{out.substr(phalanx, kueue - phalanx), out.substr(kueue)};
  };
  const auto [phalanx_off, kueue_off] = split(off.output);
  const auto [phalanx_on, kueue_on] = split(on.output);
  EXPECT_NE(phalanx_off, phalanx_on);
  EXPECT_NE(kueue_off, kueue_on);
  CliRun bad = Phalanx("simulate --fair-sharing maybe");
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.output, HasSubstr("--fair-sharing: want on or off, got \"maybe\""));
}

// --baseline-preemption swaps the topology-aware baselines' preemption rule and leaves
// Phalanx alone; a rule that is not one of the three is bad input.
TEST(CliTest, BaselinePreemptionSwapsTheBaselinesRuleOnly) {
  const std::string run =
      "simulate --nodes 32 --jobs 300 --load 1.5 --policy phalanx,kueue-tas --json";
  CliRun own = Phalanx(run);
  CliRun swapped = Phalanx(run + " --baseline-preemption kai-topology");
  ASSERT_EQ(own.code, 0) << own.output;
  ASSERT_EQ(swapped.code, 0) << swapped.output;
  const size_t own_kueue = own.output.find("{\"policy\":\"kueue-tas\"");
  const size_t swapped_kueue = swapped.output.find("{\"policy\":\"kueue-tas\"");
  ASSERT_NE(own_kueue, std::string::npos) << own.output;
  ASSERT_NE(swapped_kueue, std::string::npos) << swapped.output;
  EXPECT_EQ(own.output.substr(0, own_kueue), swapped.output.substr(0, swapped_kueue));
  EXPECT_NE(own.output.substr(own_kueue), swapped.output.substr(swapped_kueue));
  CliRun bad = Phalanx("simulate --baseline-preemption first-fit");
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.output, HasSubstr("--baseline-preemption: unknown preemption rule "
                                    "\"first-fit\" (known: kueue-tas, volcano-hypernode, "
                                    "kai-topology)"));
}

TEST(CliTest, HelpIsAvailableEverywhere) {
  EXPECT_EQ(Phalanx("simulate --help").code, 0);
  CliRun plan = Phalanx("plan --help");
  EXPECT_EQ(plan.code, 0);
  EXPECT_THAT(plan.output, HasSubstr("Usage: phalanx plan"));
}

TEST(CliTest, VersionFlagIsTheVersionCommand) {
  CliRun flag = Phalanx("--version");
  EXPECT_EQ(flag.code, 0);
  EXPECT_THAT(flag.output, ::testing::StartsWith("phalanx "));
  EXPECT_EQ(flag.output, Phalanx("version").output);
}

// What a user sees for each kind of bad file and number, through the real binary: exit 2, one
// line naming the file or flag and the value, no raw control bytes.
TEST(CliTest, BadFilesAndNumbersGetTheirOwnMessages) {
  const std::string dir = ::testing::TempDir();
  const std::string binary = WriteFile("job.bin", std::string("kind: \0\x01", 8));
  const std::string latin1 = WriteFile("job-latin1.yaml", "kind: TrainingJob\nname: caf\xe9\n");
  const std::pair<std::string, std::string> cases[] = {
      {"plan -f " + dir, "phalanx plan: " + dir + ": is a directory"},
      {"plan -f " + dir + "/missing.yaml",
       "phalanx plan: " + dir + "/missing.yaml: no such file or directory"},
      {"plan -f " + binary, "phalanx plan: " + binary + ":1: binary file: NUL byte at offset 6"},
      {"plan -f " + latin1,
       "phalanx plan: " + latin1 + ":2: not UTF-8 text: byte 0xe9 at offset 27"},
      {"simulate --trace " + dir, "phalanx simulate: " + dir + ": is a directory"},
      {"simulate --cluster " + binary, "phalanx simulate: " + binary + ":1: binary file"},
      {"simulate --report " + dir, "phalanx simulate: --report: " + dir + ": is a directory"},
      {"simulate --jobs -1", "phalanx simulate: --jobs: -1 is out of range (want 1 to 10000000)"},
      {"simulate --jobs 1e99", "phalanx simulate: --jobs: 1e99 is out of range"},
      {"simulate --seed abc", "phalanx simulate: --seed: want a non-negative integer, got \"abc\""},
      {"simulate --jobs 20 --load 1e-300",
       "phalanx simulate: --load: 1e-300 spreads 20 jobs past 100000000000 seconds"},
      {"bench placement --occupancy 2",
       "phalanx bench placement: --occupancy: 2 is out of range (want >= 0 and <= 1)"},
      {"placement reserve --server x --job a/b --count 0",
       "phalanx placement reserve: --count: 0 is out of range (want 1 to 65536)"},
      {"jobs --request-timeout 0", "phalanx jobs: --request-timeout: 0 is out of range"},
      {"simulate --policy \"$(printf '\\033[31mred')\"",
       "phalanx simulate: unknown policy \"\\x1b[31mred\""},
  };
  for (const auto& [args, message] : cases) {
    CliRun run = Phalanx(args);
    EXPECT_EQ(run.code, 2) << args << ": " << run.output;
    EXPECT_THAT(run.output, ::testing::StartsWith(message)) << args;
    EXPECT_EQ(run.output.find('\x1b'), std::string::npos) << args;
  }
}

TEST(CliTest, PlanPlacesTheExamplePretrainingJobInOneBlock) {
  CliRun run = Phalanx(std::string("plan -f ") + PHALANX_SOURCE_DIR +
                       "/deploy/examples/10-trainingjob-pretrain-64gpu.yaml");
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("placed 8 pods inside topology.k8s.aws/network-node-layer-3="));
  EXPECT_THAT(run.output, HasSubstr("rank 7"));
  EXPECT_THAT(run.output, HasSubstr("1.00x the ideal placement"));
}

// A TrainingJob manifest of `replicas` pods of 8 GPUs, its topology block given as is.
std::string JobYaml(const std::string& name, int replicas, const std::string& topology = "") {
  return "apiVersion: phalanx.dev/v1alpha1\nkind: TrainingJob\nmetadata: {name: " + name +
         ", namespace: t}\nspec:\n  queueName: q\n  replicas: " + std::to_string(replicas) +
         "\n" + topology +
         "  template:\n    spec:\n      containers:\n      - name: c\n"
         "        resources: {limits: {nvidia.com/gpu: 8}}\n";
}

// kubectl apply sends every document of a file, so plan checks every TrainingJob and plans
// each alone (it read only the first, and a bad second one passed unseen); an error in a later
// document names its line in the file. The same from standard input (`-f -`, as kubectl reads
// it), which messages name <stdin>.
TEST(CliTest, PlanChecksAndPlansEveryTrainingJobOfAFile) {
  const std::string two = WriteFile(
      "two.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: t}\n---\n" +
                      JobYaml("one", 1) + "---\n" + JobYaml("eight", 8));
  const std::string bad = WriteFile("bad-second.yaml", JobYaml("one", 1) + "---\n" +
                                                           JobYaml("zero", 0));
  for (const bool from_stdin : {false, true}) {
    const std::string file = from_stdin ? "-f - < " : "-f ";
    CliRun run = Phalanx("plan " + file + two);
    EXPECT_EQ(run.code, 0) << run.output;
    EXPECT_THAT(run.output, HasSubstr("TrainingJob t/one: 1 pod of {nvidia.com/gpu=8}"));
    EXPECT_THAT(run.output, HasSubstr("placed 1 pod inside"));
    EXPECT_THAT(run.output, HasSubstr("TrainingJob t/eight: 8 pods of {nvidia.com/gpu=8}"));
    EXPECT_THAT(run.output, HasSubstr("placed 8 pods inside"));
    run = Phalanx("plan " + file + bad);
    EXPECT_EQ(run.code, 2) << run.output;
    EXPECT_THAT(run.output, HasSubstr(absl::StrCat("phalanx plan: ", from_stdin ? "<stdin>" : bad,
                                                   ":18: spec.replicas: Invalid value: 0")));
  }
}

// `manifest` as an item of a YAML list, indented under "items:".
std::string ListItem(const std::string& manifest) {
  std::string out = "- ";
  for (char c : manifest) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out.substr(0, out.size() - 2);  // no indent after the last line
}

// kubectl apply unpacks a `kind: List` (what `kubectl get -o yaml` writes) as if each item were
// a document: plan checks and plans every TrainingJob item, and names a bad one's line.
TEST(CliTest, PlanUnpacksAKindListLikeKubectl) {
  const std::string list = WriteFile(
      "list.yaml", "apiVersion: v1\nkind: List\nitems:\n" +
                       ListItem("apiVersion: v1\nkind: Namespace\nmetadata: {name: t}\n") +
                       ListItem(JobYaml("one", 1)) + ListItem(JobYaml("eight", 8)) +
                       "---\n" + JobYaml("doc", 2));
  CliRun run = Phalanx("plan -f " + list);
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("TrainingJob t/one: 1 pod of {nvidia.com/gpu=8}"));
  EXPECT_THAT(run.output, HasSubstr("TrainingJob t/eight: 8 pods of {nvidia.com/gpu=8}"));
  EXPECT_THAT(run.output, HasSubstr("TrainingJob t/doc: 2 pods of {nvidia.com/gpu=8}"));
  // The second TrainingJob's replicas are on line 23 of the file: 3 lines before the items, 3 of
  // the Namespace, 11 of the first TrainingJob, then its own sixth line.
  const std::string bad = WriteFile(
      "list-bad.yaml", "apiVersion: v1\nkind: List\nitems:\n" +
                           ListItem("apiVersion: v1\nkind: Namespace\nmetadata: {name: t}\n") +
                           ListItem(JobYaml("one", 1)) + ListItem(JobYaml("zero", 0)));
  run = Phalanx("plan -f " + bad);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("list-bad.yaml:23: spec.replicas: Invalid value: 0"));
  const std::string wrong = WriteFile(
      "list-wrong.yaml", "apiVersion: phalanx.dev/v1alpha1\nkind: List\nitems:\n" +
                             ListItem(JobYaml("one", 1)));
  run = Phalanx("plan -f " + wrong);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("list-wrong.yaml:1: apiVersion: a List is v1, got "
                                    "\"phalanx.dev/v1alpha1\""));
}

// `-f -` reads standard input (PlanChecksAndPlansEveryTrainingJobOfAFile reads both ways), and
// every message names it <stdin>, the cluster file keeping its own name.
TEST(CliTest, PlanReadsStandardInputForDashAndNamesItStdin) {
  const std::string one = WriteFile("stdin-one.yaml", JobYaml("one", 1));
  CliRun run = Phalanx("plan --file=- < " + one);
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("TrainingJob t/one: 1 pod of {nvidia.com/gpu=8}"));
  run = Phalanx("plan -f - < /dev/null");
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("phalanx plan: <stdin>: kind: no TrainingJob document found"));
  run = Phalanx("plan -f - --cluster " + one + " < " + one);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("phalanx plan: " + one + ":"));  // the bad cluster file
  EXPECT_THAT(run.output, Not(HasSubstr("<stdin>")));
  run = Phalanx("plan -f - < " + WriteFile("stdin-level.yaml",
                                           JobYaml("g", 8, "  topology: {groupSize: 4, "
                                                           "groupLevel: layer-3}\n")));
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("phalanx plan: <stdin>:7: spec.topology.groupLevel: does "
                                    "not fit cluster built-in: \"layer-3\""));
}

// A level the cluster does not have is named by the manifest's field and line, not by the
// placement core's request field; a trace's short name gets the label key it stands for.
TEST(CliTest, PlanNamesTheManifestFieldOfALevelTheClusterLacks) {
  const std::string job = WriteFile(
      "short-level.yaml",
      JobYaml("short", 2, "  topology:\n    groupSize: 2\n    groupLevel: layer-3\n"));
  CliRun run = Phalanx("plan -f " + job);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("short-level.yaml:9: spec.topology.groupLevel: does not fit cluster "
                        "built-in: \"layer-3\" is not one of its levels "
                        "(topology.k8s.aws/network-node-layer-1, "));
  EXPECT_THAT(run.output, HasSubstr("a TrainingJob names the label key, "
                                    "topology.k8s.aws/network-node-layer-3"));
  EXPECT_THAT(run.output, Not(HasSubstr("request.group_level")));
}

TEST(CliTest, PlanTensorParallelJobNeedsAClusterWithCliques) {
  const std::string job = std::string(PHALANX_SOURCE_DIR) +
                          "/deploy/examples/12-trainingjob-gb200-tensor-parallel.yaml";
  CliRun p5_only = Phalanx("plan -f " + job);
  EXPECT_EQ(p5_only.code, 2);
  EXPECT_THAT(p5_only.output, HasSubstr("does not fit cluster built-in"));
  EXPECT_THAT(p5_only.output, HasSubstr("nvidia.com/gpu.clique"));
  EXPECT_THAT(p5_only.output, HasSubstr("; built-in scenario gb200 has it: --scenario gb200"));
  CliRun gb200 = Phalanx("plan -f " + job + " --scenario gb200");
  EXPECT_EQ(gb200.code, 0) << gb200.output;
  EXPECT_THAT(gb200.output, HasSubstr("(built-in scenario gb200, empty)"));
  EXPECT_THAT(gb200.output, HasSubstr("placed 16 pods inside nvidia.com/gpu.clique="));
  CliRun unknown = Phalanx("plan -f " + job + " --scenario gb300");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_THAT(unknown.output,
              HasSubstr("unknown scenario \"gb300\" (known: default, gb200, mixed)"));
  CliRun both = Phalanx("plan -f " + job + " --scenario gb200 --cluster " + PHALANX_SOURCE_DIR +
                        "/sim/examples/cluster.yaml");
  EXPECT_EQ(both.code, 2);
  EXPECT_THAT(both.output, HasSubstr("cannot be combined with --cluster"));
  CliRun mixed =
      Phalanx("plan -f " + job + " --cluster " + PHALANX_SOURCE_DIR + "/sim/examples/cluster.yaml");
  EXPECT_EQ(mixed.code, 0) << mixed.output;
  EXPECT_THAT(mixed.output, HasSubstr("inside nvidia.com/gpu.clique=gb200-clique-"));
}

// --queue: the gang keeps to the node groups whose flavor the queue can give it, as admission
// and `simulate` would (audit 32: plan said "placed" where the queue had no quota).
TEST(CliTest, PlanWithAQueueKeepsToTheGroupsItsQuotaReaches) {
  const std::string cluster = std::string(PHALANX_SOURCE_DIR) + "/sim/examples/cluster.yaml";
  auto job = [](int replicas) {
    return WriteFile(absl::StrCat("q", replicas, ".yaml"),
                     absl::StrCat(R"(apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: j, namespace: t}
spec:
  queueName: q
  replicas: )", replicas, R"(
  template:
    spec:
      containers:
      - name: c
        resources: {limits: {nvidia.com/gpu: 4}}
)"));
  };
  // 4-GPU pods fit both groups; research has h100 quota only.
  CliRun research = Phalanx("plan -f " + job(2) + " --cluster " + cluster + " --queue research");
  EXPECT_EQ(research.code, 0) << research.output;
  EXPECT_THAT(research.output, HasSubstr("placed 2 pods"));
  EXPECT_THAT(research.output, Not(HasSubstr("gb200-clique")));
  EXPECT_THAT(research.output, HasSubstr("quota: ClusterTrainingQueue research can hold the gang "
                                         "in node group h100; not in gb200 (at most 0 of the 8 "
                                         "GPUs it needs)"));
  // More GPUs than research can ever hold anywhere (256 nominal + 128 borrowed).
  CliRun never = Phalanx("plan -f " + job(100) + " --cluster " + cluster + " --queue research");
  EXPECT_EQ(never.code, 0) << never.output;
  EXPECT_THAT(never.output, HasSubstr("TrainingJob t/j: cannot be admitted: ClusterTrainingQueue "
                                      "research can never admit it"));
  CliRun unknown = Phalanx("plan -f " + job(2) + " --cluster " + cluster + " --queue nope");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_THAT(unknown.output, HasSubstr("--queue: cluster"));
  EXPECT_THAT(unknown.output, HasSubstr("has no queue \"nope\" (it has pretraining, research)"));
}

TEST(CliTest, PlanExplainsWhyAGangCannotFit) {
  const std::string job = WriteFile("huge.yaml", R"(apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: huge, namespace: t}
spec:
  queueName: q
  replicas: 40
  topology: {required: topology.k8s.aws/network-node-layer-3}
  template:
    spec:
      containers:
      - name: c
        resources: {limits: {nvidia.com/gpu: 8}}
)");
  CliRun run = Phalanx("plan -f " + job);
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("cannot be placed"));
  EXPECT_THAT(run.output, HasSubstr("holds 16 of 40 pods"));
}

// A 2-pod job with `topology.k8s.aws/network-node-layer-3 <op> [values]` as its required node
// affinity ("" = none), planned; returns the output.
std::string PlanWithAffinity(const std::string& name, const std::string& op,
                             const std::string& values, int* code) {
  std::string affinity;
  if (!op.empty()) {
    affinity = R"(      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: topology.k8s.aws/network-node-layer-3, operator: )" +
               op + ", values: [" + values + "]}\n";
  }
  const std::string job = WriteFile(name + ".yaml", R"(apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: )" + name + R"(, namespace: t}
spec:
  queueName: q
  replicas: 2
  topology: {required: topology.k8s.aws/network-node-layer-3}
  template:
    spec:
)" + affinity + R"(      containers:
      - name: c
        resources: {limits: {nvidia.com/gpu: 8}}
)");
  CliRun run = Phalanx("plan -f " + job);
  *code = run.code;
  return run.output;
}

// `phalanx plan` honours the template's required node affinity as placement does.
TEST(CliTest, PlanKeepsTheGangOutOfTheBlockItsAffinityExcludes) {
  int code = 0;
  const std::string free = PlanWithAffinity("free", "", "", &code);
  ASSERT_EQ(code, 0) << free;
  const std::string kInside = "inside topology.k8s.aws/network-node-layer-3=";
  const size_t at = free.find(kInside);
  ASSERT_NE(at, std::string::npos) << free;
  const std::string block =
      free.substr(at + kInside.size(), free.find_first_of(" \n:,", at + kInside.size()) -
                                           (at + kInside.size()));
  const std::string away = PlanWithAffinity("away", "NotIn", block, &code);
  EXPECT_EQ(code, 0) << away;
  EXPECT_THAT(away, HasSubstr(kInside));
  EXPECT_THAT(away, Not(HasSubstr(kInside + block))) << "excluded " << block;
  const std::string nowhere = PlanWithAffinity("nowhere", "In", "no-such-block", &code);
  EXPECT_EQ(code, 0) << nowhere;
  EXPECT_THAT(nowhere, HasSubstr("cannot be placed"));
  EXPECT_THAT(nowhere, HasSubstr("NodeSelectorMismatch"));
  const std::string bad = PlanWithAffinity("bad", "Gt", "ten", &code);
  EXPECT_EQ(code, 2) << bad;
  EXPECT_THAT(bad, HasSubstr(":14: spec.template.spec.affinity.nodeAffinity."
                             "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
                             ".matchExpressions[0].values: for Gt and Lt, exactly one integer"));
}

TEST(CliTest, PlanBadJobIsExit2WithFileLineAndField) {
  const std::string job = WriteFile("bad-job.yaml", R"(apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: bad}
spec:
  queueName: q
  replicas: zero
  template: {spec: {containers: [{name: c}]}}
)");
  CliRun run = Phalanx("plan -f " + job);
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.output, HasSubstr(job + ":6: spec.replicas: Invalid value: \"zero\": spec.replicas "
                                           "in body must be of type integer: \"string\""));
  EXPECT_EQ(Phalanx("plan").code, 2);
}

// The trace row from issue 13 used to run (every policy reported done 0) and exit 0.
TEST(CliTest, SimulateRejectsATraceRowTheCrdRejectsNamingItsLine) {
  const std::string cluster = WriteFile(
      "gb.yaml",
      "nodeGroups:\n- {name: gb, instanceType: p6e-gb200.36xlarge, count: 72}\n"
      "queues:\n- {name: all, nominalQuota: {nvidia.com/gpu: 288}}\n");
  const std::string trace = WriteFile(
      "g.csv",
      "name,submit_s,queue,pods,gpus_per_pod,duration_s,elastic_min,elastic_max,elastic_step,"
      "required_level,preferred_level,group_size,group_level\n"
      "g,0,all,4,4,3600,2,4,2,layer-3,clique,4,clique\n");
  CliRun run = Phalanx("simulate --cluster " + cluster + " --trace " + trace);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr(trace + ":2: topology.groupSize must divide elastic.min"));
}

// A job whose queue has no quota anywhere can never start: refused at load (exit 2, its line
// named), or with --allow-unplaceable run, counted apart and warned about on stderr.
TEST(CliTest, SimulateRefusesOrCountsJobsThatCanNeverStart) {
  const std::string cluster = WriteFile(
      "broke.yaml",
      "nodeGroups:\n- {name: p5, instanceType: p5.48xlarge, count: 16}\n"
      "queues:\n- {name: q, nominalQuota: {nvidia.com/gpu: 128}}\n"
      "- {name: broke, nominalQuota: {nvidia.com/gpu: 0}}\n");
  const std::string trace = WriteFile(
      "broke.csv", "name,submit_s,queue,pods,duration_s\na,0,q,2,3600\nb,10,broke,2,3600\n");
  const std::string args =
      "simulate --cluster " + cluster + " --trace " + trace + " --policy phalanx,kueue-tas --json";
  CliRun run = Phalanx(args);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr(trace + ":3: job b can never be placed: queue broke has no "
                                            "GPU quota for it"));
  run = Phalanx(args + " --allow-unplaceable");
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("1 of 2 jobs can never be placed on this cluster"));
  EXPECT_THAT(run.output, HasSubstr("1 of 2 jobs never started under phalanx (1 of them "
                                    "unplaceable)"));
  EXPECT_THAT(run.output, HasSubstr("1 of 2 jobs never started under kueue-tas"));
  EXPECT_THAT(run.output, HasSubstr("\"jobs_never_started\":1"));
  EXPECT_THAT(run.output, HasSubstr("\"jobs_unplaceable\":1"));
}

// Issue 13's example: on 72 GB200 nodes (4 NVL72 cliques of 18), 68 pods in TP groups of 4
// per clique can never fit (4 cliques x 16 = 64). Every baseline used to "complete" it.
TEST(CliTest, SimulateRefusesAGangWhoseGroupsCanNeverFit) {
  const std::string cluster = WriteFile(
      "gb72.yaml",
      "nodeGroups:\n- {name: gb, instanceType: p6e-gb200.36xlarge, count: 72, topology: "
      "{preset: gb200, fanout: [1, 1, 4, 18]}}\n"
      "queues:\n- {name: all, nominalQuota: {nvidia.com/gpu: 288}}\n");
  const std::string trace = WriteFile(
      "gb68.csv",
      "name,submit_s,queue,pods,gpus_per_pod,duration_s,group_size,group_level\n"
      "big,0,all,68,4,3600,4,clique\nsmall,10,all,4,4,600,4,clique\n");
  const std::string args = "simulate --cluster " + cluster + " --trace " + trace;
  CliRun run = Phalanx(args);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr(trace + ":2: job big can never be placed: 68 pods in groups of 4, each "
                                "inside one nvidia.com/gpu.clique domain: at most 64 fit"));
  // Allowed, no policy runs it: first-fit too honours TP groups now (kube-scheduler pod
  // affinity per group, docs/baselines.md), so its pods wait at Permit and it never starts.
  run = Phalanx(args + " --allow-unplaceable --policy phalanx,first-fit");
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("1 of 2 jobs never started under first-fit (1 of them "
                                    "unplaceable)"));
  EXPECT_THAT(run.output, Not(HasSubstr("broke rules")));
}

// The "# expect:" lines of a manifest of tests/e2e/cluster/invalid/ (which the e2e test
// applies to a real API server, checking that its answer holds each), and whether it is a
// TrainingJob.
struct InvalidManifest {
  std::string path;
  bool training_job = false;
  std::vector<std::string> expect;
};

std::vector<InvalidManifest> InvalidManifests() {
  std::vector<InvalidManifest> out;
  const std::string dir = std::string(PHALANX_SOURCE_DIR) + "/tests/e2e/cluster/invalid";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    InvalidManifest manifest{.path = entry.path().string()};
    std::ifstream file(manifest.path);
    for (std::string line; std::getline(file, line);) {
      if (line.rfind("# expect: ", 0) == 0) manifest.expect.push_back(line.substr(10));
      if (line == "kind: TrainingJob") manifest.training_job = true;
    }
    out.push_back(std::move(manifest));
  }
  return out;
}

// `phalanx plan` validates by the CRD's own schema and rules (embedded from crds/): every
// TrainingJob manifest the API server must reject, plan rejects too (exit 2) with the text the
// API server gives. Nothing here lists the manifests: a new one is checked as soon as it exists.
TEST(CliTest, PlanRejectsEveryInvalidTrainingJobManifestLikeTheCrd) {
  int checked = 0;
  for (const InvalidManifest& manifest : InvalidManifests()) {
    if (!manifest.training_job) continue;
    SCOPED_TRACE(manifest.path);
    ASSERT_FALSE(manifest.expect.empty());
    CliRun run = Phalanx("plan -f " + manifest.path);
    EXPECT_EQ(run.code, 2) << run.output;
    for (const std::string& text : manifest.expect) EXPECT_THAT(run.output, HasSubstr(text));
    ++checked;
  }
  EXPECT_GE(checked, 21);
}

// The valid examples: every TrainingJob of deploy/examples/ passes (placed on the mixed p5 +
// GB200 example cluster, which has the levels all three ask for).
TEST(CliTest, PlanAcceptsEveryExampleTrainingJob) {
  int checked = 0;
  const std::string examples = std::string(PHALANX_SOURCE_DIR) + "/deploy/examples";
  for (const auto& entry : std::filesystem::directory_iterator(examples)) {
    std::ifstream file(entry.path());
    const std::string text((std::istreambuf_iterator<char>(file)), {});
    if (text.find("kind: TrainingJob\n") == std::string::npos) continue;
    CliRun run = Phalanx("plan -f " + entry.path().string() + " --cluster " + PHALANX_SOURCE_DIR +
                         "/sim/examples/cluster.yaml");
    EXPECT_EQ(run.code, 0) << entry.path() << ": " << run.output;
    EXPECT_THAT(run.output, HasSubstr("placed ")) << entry.path();
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

// A template the API server would refuse every pod of is refused by plan as by the operator:
// an extended resource requested without an equal limit.
TEST(CliTest, PlanRejectsAnExtendedRequestWithoutAnEqualLimit) {
  const std::string job = WriteFile("efa.yaml", R"(apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: efa, namespace: t}
spec:
  queueName: q
  replicas: 2
  template:
    spec:
      containers:
      - name: trainer
        image: t
        resources:
          requests: {nvidia.com/gpu: 8, vpc.amazonaws.com/efa: 32}
          limits: {nvidia.com/gpu: 8}
)");
  CliRun run = Phalanx("plan -f " + job);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("spec.template.spec.containers[0].resources.limits"
                                    "[vpc.amazonaws.com/efa]: must be set, equal to the request"));
}

// Required pod anti-affinity is refused by plan as by the operator, naming the field and line.
TEST(CliTest, PlanRejectsRequiredPodAntiAffinity) {
  const std::string job = WriteFile("anti.yaml", R"(apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: anti, namespace: t}
spec:
  queueName: q
  replicas: 4
  template:
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {app: anti}}
            topologyKey: kubernetes.io/hostname
      containers:
      - {name: c, image: t, resources: {limits: {nvidia.com/gpu: 4}}}
)");
  CliRun run = Phalanx("plan -f " + job);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("anti.yaml:12: spec.template.spec.affinity.podAntiAffinity."
                                    "requiredDuringSchedulingIgnoredDuringExecution[0]: not "
                                    "modelled by gang placement"));
}

// The anti-affinity of a job's own pods per node is modelled: plan places one rank per node
// where the pods' 4 GPUs would otherwise pack two per 8-GPU node.
TEST(CliTest, PlanPlacesOneRankPerNodeForSelfAntiAffinity) {
  auto manifest = [](const std::string& affinity) {
    return R"(apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: spread, namespace: t}
spec:
  queueName: q
  replicas: 4
  template:
    metadata: {labels: {app: spread}}
    spec:
)" + affinity + R"(      containers:
      - {name: c, image: t, resources: {limits: {nvidia.com/gpu: 4}}}
)";
  };
  const std::string anti = R"(      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {app: spread}}
            topologyKey: kubernetes.io/hostname
)";
  // The distinct nodes of the "  rank N    NODE ..." lines.
  auto nodes_used = [](const std::string& output) {
    std::set<std::string> nodes;
    std::istringstream lines(output);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream words(line);
      std::string rank, index, node;
      if (words >> rank >> index >> node && rank == "rank") nodes.insert(node);
    }
    return nodes.size();
  };
  CliRun packed = Phalanx("plan -f " + WriteFile("packed.yaml", manifest("")));
  ASSERT_EQ(packed.code, 0) << packed.output;
  CliRun spread = Phalanx("plan -f " + WriteFile("spread.yaml", manifest(anti)));
  ASSERT_EQ(spread.code, 0) << spread.output;
  EXPECT_EQ(nodes_used(packed.output), 2u) << packed.output;
  EXPECT_EQ(nodes_used(spread.output), 4u) << spread.output;
}

// Unknown fields are rejected by path (kubectl's default, --validate=strict), types by the
// schema; inside the pod spec (x-kubernetes-preserve-unknown-fields) anything goes, as on the
// API server.
TEST(CliTest, PlanRejectsUnknownFieldsAndWrongTypesByPath) {
  const std::string job = WriteFile("unknown.yaml", R"(apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: ok, namespace: t, labels: {a: b}}
spec:
  queueName: q
  replica: 8
  replicas: 8
  topology: {requried: x}
  template:
    metadata: {labels: {a: b}, annotation: {}}
    spec:
      containers: [{name: c, resources: {limits: {nvidia.com/gpu: 8}}, anything: 1}]
      whatever: true
  priority: "5"
  suspend: maybe
)");
  CliRun run = Phalanx("plan -f " + job);
  EXPECT_EQ(run.code, 2);
  EXPECT_EQ(run.output,
            "phalanx plan: " + job + ":6: unknown field \"spec.replica\"\n"
            "phalanx plan: " + job + ":8: unknown field \"spec.topology.requried\"\n"
            "phalanx plan: " + job + ":10: unknown field \"spec.template.metadata.annotation\"\n"
            "phalanx plan: " + job + ":14: spec.priority: Invalid value: \"5\": spec.priority in "
            "body must be of type integer: \"string\"\n"
            "phalanx plan: " + job + ":15: spec.suspend: Invalid value: \"maybe\": spec.suspend in "
            "body must be of type boolean: \"string\"\n");
}

// Found by fuzz_sim_yaml: the pod template is not checked by the CRD's schema, and a container
// whose resources were a scalar made `plan` abort (operator[] on a scalar threw). Each is now a
// clear error naming the field.
TEST(CliTest, PlanRejectsAContainerOrResourcesThatAreNotMaps) {
  const std::string head = R"(apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: ok}
spec:
  queueName: q
  replicas: 2
  template:
    spec:
      containers:
)";
  const std::string scalar_resources = WriteFile("scalar-resources.yaml",
                                                 head + "      - {name: c, resources: req}\n");
  CliRun run = Phalanx("plan -f " + scalar_resources);
  EXPECT_EQ(run.code, 2);
  EXPECT_EQ(run.output, "phalanx plan: " + scalar_resources +
                            ":10: spec.template.spec.containers[0].resources: want a map, got "
                            "\"req\"\n");
  const std::string scalar_requests = WriteFile(
      "scalar-requests.yaml", head + "      - {name: c, resources: {requests: 8}}\n");
  run = Phalanx("plan -f " + scalar_requests);
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.output, ::testing::HasSubstr("spec.template.spec.containers[0].resources."
                                               "requests: want a map"));
}

}  // namespace
