// `phalanx bench admission`: times one admission cycle (docs/benchmarks.md's target: 10,000
// pending workloads over 100 ClusterQueues, < 100 ms) against the real in-process placement
// service on a synthetic cluster. docs/benchmarks.md records the results and the commands.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <optional>
#include <type_traits>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "operator/admission/admission_cycle.h"
#include "operator/admission/apply.h"
#include "operator/admission/synthetic_queues.h"
#include "scheduler/in_process_placement_service.h"
#include "scheduler/synthetic_cluster.h"

namespace phalanx::cli {
namespace {

constexpr char kUsage[] =
    R"(Usage: phalanx bench admission [--pending N] [--queues N] [--cohorts N] [--nodes N]
                               [--seed S] [--steady] [--flavor-label KEY=VALUE]
                               [--explain N] [--repeat R] [--occupied F [--cycles C]]
                               [--json]

Times one admission cycle: --pending synthetic training jobs (1 to 32 nodes of 8 GPUs, a tenth
elastic, most with a required topology level) over --queues ClusterQueues in --cohorts cohorts
whose nominal quotas add up to the cluster, placed by the in-process placement service on
--nodes p5.48xlarge nodes (eks-4layer topology).

  --pending N   pending workloads, 0 to 1000000 (default 10000)
  --queues N    ClusterQueues, 1 to 100000 (default 100)
  --cohorts N   cohorts, 0 to 100000 (default 10)
  --nodes N     nodes, 1 to 100000 (default 4096)
  --seed S      seed of the cluster and the workloads (default 1)
  --steady      first fill the cluster with one cycle, then time a second cycle over
                --pending new workloads (quota exhausted: the cost of saying no, and of
                preemption attempts)
  --flavor-label KEY=VALUE
                the flavor's node label, which every gang's node selector carries
                (default node.kubernetes.io/instance-type=p5.48xlarge; "none" for no label)
  --explain N   also print the first N pending workloads' reasons (to stderr)
  --repeat R    time R independent cycles (1 to 1000) and report the median by CPU
                (default 5)
  --occupied F  the loaded run instead: admit jobs of a first batch until a fraction F (0 to
                1) of the GPUs is held by running workloads (which preemption may take:
                every queue preempts lower priorities within itself and reclaims lent quota),
                then time C consecutive cycles over --pending new workloads, each cycle's
                decisions applied before the next, as the operator runs them
  --cycles C    cycles timed with --occupied, 1 to 10000 (default 20)
  --json        print {"pending":..,"queues":..,"cycle_ms":..,"admitted":..,...}

cycle_ms is wall time; cycle_cpu_ms the process's CPU time, split into the placement service's
share and the admission core's own (admissions_per_second is per CPU second). With --occupied,
--json prints {"mode":"loaded",...,"occupancy":..,"cycle_ms_p50":..,"cycle_ms_p99":..,
"cycle_cpu_ms_p50":..,"cycle_cpu_ms_p99":..,"cycle_ms":[..],...}: the percentiles are per cycle
(nearest rank), wall and CPU.

Exit codes: 0 success, 1 runtime failure, 2 bad input.)";

// CPU time of this process in milliseconds: the machine may be shared, and wall time then
// measures the neighbours as much as the cycle.
double CpuMs() { return 1000.0 * static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// Forwards to the real service and adds up the CPU time spent in it, so the report can split a
// cycle into placement time and the admission core's own time.
class TimedPlacementService : public placement::PlacementService {
 public:
  explicit TimedPlacementService(placement::PlacementService& inner) : inner_(inner) {}
  double ms() const { return ms_; }

  absl::StatusOr<placement::PlacementResult> Place(
      const placement::GangRequest& request) const override {
    return Timed([&] { return inner_.Place(request); });
  }
  absl::StatusOr<placement::StartEstimate> EstimateStart(
      const placement::GangRequest& request,
      const std::vector<placement::EndingGang>& ends) const override {
    return Timed([&] { return inner_.EstimateStart(request, ends); });
  }
  absl::StatusOr<placement::PlacementResult> Reserve(
      const placement::GangRequest& request) override {
    return Timed([&] { return inner_.Reserve(request); });
  }
  std::vector<absl::StatusOr<placement::PlacementResult>> ReserveBatch(
      const std::vector<placement::GangRequest>& requests) override {
    return Timed([&] { return inner_.ReserveBatch(requests); });
  }
  absl::Status Release(std::string_view job) override {
    return Timed([&] { return inner_.Release(job); });
  }
  absl::StatusOr<placement::PlacementResult> Resize(std::string_view job,
                                                    int32_t new_count) override {
    return Timed([&] { return inner_.Resize(job, new_count); });
  }
  absl::StatusOr<placement::PlacementResult> ReplaceNodes(
      std::string_view job, const std::vector<std::string>& nodes) override {
    return Timed([&] { return inner_.ReplaceNodes(job, nodes); });
  }
  absl::StatusOr<placement::PreemptionPlan> PlanPreemption(
      const placement::GangRequest& request,
      const std::vector<placement::RunningGang>& candidates) const override {
    return Timed([&] { return inner_.PlanPreemption(request, candidates); });
  }

 private:
  template <typename Call>
  std::invoke_result_t<Call> Timed(Call call) const {
    double start = CpuMs();
    auto result = call();
    ms_ += CpuMs() - start;
    return result;
  }

  placement::PlacementService& inner_;
  mutable double ms_ = 0;
};

constexpr char kCommand[] = "bench admission";

// Nearest-rank percentile of `values` (not empty), p in (0, 100].
double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

// The loaded run: the cluster `occupied` full of running workloads, then `cycles` consecutive
// cycles over options.pending new ones, timed one by one.
int RunLoaded(const placement::ClusterSnapshot& cluster, int32_t nodes,
              const admission::SyntheticQueuesOptions& options, double occupied, int32_t cycles,
              bool json) {
  placement::InProcessPlacementService service(cluster);
  auto held_gpus = [&] {
    int64_t gpus = 0;
    service.Read([&](const placement::ClusterSnapshot& s) {
      for (const std::string& job : s.ReservedJobs()) {
        const auto* r = s.FindReservation(job);
        gpus += static_cast<int64_t>(r->ranks.size()) *
                r->request.per_pod.at(std::string(kResourceGpu));
      }
    });
    return gpus;
  };
  // Fill: jobs of a first batch, in creation order, with the synthetic mix's priorities (so
  // preemption has candidates). Each fill cycle offers the next ones that fit in what is left
  // of the target; jobs quota or topology refused are dropped, until no job is left to offer
  // (a cycle that admits none of its offers is no reason to stop: with each queue alone in its
  // cohort, the first offers can all be one queue's, over its quota).
  admission::Snapshot snapshot = admission::BuildSyntheticQueues(options);
  std::vector<admission::Workload> pool = std::move(snapshot.workloads);
  snapshot.workloads.clear();
  const int64_t target = static_cast<int64_t>(occupied * static_cast<double>(options.total_gpus));
  std::vector<bool> offered(pool.size(), false);
  int fill_cycles = 0;
  for (; fill_cycles < 200; ++fill_cycles) {
    std::erase_if(snapshot.workloads, [](const admission::Workload& w) { return !w.admitted; });
    int64_t room = target - held_gpus();
    size_t offers = 0;
    for (size_t i = 0; i < pool.size(); ++i) {
      const admission::Workload& w = pool[i];
      int64_t gpus = int64_t{w.elastic ? w.elastic->max : w.count} * options.gpus_per_pod;
      if (offered[i] || gpus > room) continue;  // a smaller one later may still fit
      room -= gpus;
      offered[i] = true;
      ++offers;
      snapshot.workloads.push_back(w);
    }
    if (offers == 0) break;
    admission::CycleResult fill = admission::RunAdmissionCycle(snapshot, service);
    admission::ApplyDecisions(fill, snapshot);
  }
  std::erase_if(snapshot.workloads, [](const admission::Workload& w) { return !w.admitted; });
  const int64_t filled = held_gpus();
  snapshot = admission::SteadyStateQueues(std::move(snapshot), admission::CycleResult{}, options);

  admission::CycleCache cache;
  admission::CycleOptions cycle_options;
  cycle_options.cache = &cache;
  std::vector<double> wall, cpu, placement_cpu;
  size_t admitted = 0, preemptions = 0;
  int round_trips = 0;
  for (int c = 0; c < cycles; ++c) {
    TimedPlacementService timed(service);
    auto start = std::chrono::steady_clock::now();
    double cpu_start = CpuMs();
    admission::CycleResult result = admission::RunAdmissionCycle(snapshot, timed, cycle_options);
    cpu.push_back(CpuMs() - cpu_start);
    wall.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    placement_cpu.push_back(timed.ms());
    admitted += result.admissions.size();
    preemptions += result.preemptions.size();
    round_trips += result.calls.Total();
    admission::ApplyDecisions(result, snapshot);
    ++snapshot.now;
  }
  size_t still_pending = 0;
  for (const admission::Workload& w : snapshot.workloads) still_pending += !w.admitted;
  const double occupancy =
      static_cast<double>(filled) / static_cast<double>(std::max<int64_t>(1, options.total_gpus));
  // The figures describe the cluster as filled, not as asked for: say when the two differ.
  if (occupancy < 0.9 * occupied) {
    std::fprintf(stderr,
                 "phalanx bench admission: warning: the fill reached %.1f %% of the GPUs, not the "
                 "%.0f %% asked for (the queues' quotas or the topology refused the rest); the "
                 "cycles below ran on that\n",
                 100 * occupancy, 100 * occupied);
  }
  if (json) {
    std::string per_cycle;
    for (double ms : wall) absl::StrAppend(&per_cycle, per_cycle.empty() ? "" : ",",
                                           absl::StrFormat("%.2f", ms));
    std::printf(
        "{\"mode\":\"loaded\",\"pending\":%d,\"queues\":%d,\"cohorts\":%d,\"nodes\":%d,"
        "\"occupied\":%.2f,\"occupancy\":%.4f,\"fill_cycles\":%d,\"cycles\":%d,"
        "\"cycle_ms_p50\":%.2f,\"cycle_ms_p99\":%.2f,\"cycle_cpu_ms_p50\":%.2f,"
        "\"cycle_cpu_ms_p99\":%.2f,\"placement_cpu_ms_p50\":%.2f,\"placement_cpu_ms_p99\":%.2f,"
        "\"admitted\":%zu,\"preemptions\":%zu,\"still_pending\":%zu,\"round_trips\":%d,"
        "\"cycle_ms\":[%s]}\n",
        options.pending, options.queues, options.cohorts, nodes, occupied, occupancy, fill_cycles,
        cycles, Percentile(wall, 50), Percentile(wall, 99), Percentile(cpu, 50),
        Percentile(cpu, 99), Percentile(placement_cpu, 50), Percentile(placement_cpu, 99),
        admitted, preemptions, still_pending, round_trips, per_cycle.c_str());
  } else {
    std::printf("loaded admission: %d nodes %.1f %% held by running workloads, then %d pending "
                "over %d ClusterQueues in %d cohorts, %d consecutive cycles\n",
                nodes, 100 * occupancy, options.pending, options.queues, options.cohorts, cycles);
    std::printf("  per cycle: wall p50 %.2f ms, p99 %.2f ms; CPU p50 %.2f ms, p99 %.2f ms "
                "(placement service p50 %.2f ms)\n",
                Percentile(wall, 50), Percentile(wall, 99), Percentile(cpu, 50),
                Percentile(cpu, 99), Percentile(placement_cpu, 50));
    std::printf("  %zu admitted, %zu preemptions, %zu still pending, %d placement round trips\n",
                admitted, preemptions, still_pending, round_trips);
  }
  return kExitOk;
}

int RunBenchAdmission(const std::vector<std::string>& args) {
  admission::SyntheticQueuesOptions queues;
  int32_t nodes = 4096;
  uint64_t seed = 1;
  bool json = false, steady = false;
  int32_t explain = 0;
  int32_t repeat = 5;
  int32_t cycles = 20;
  std::optional<double> occupied;
  std::string flavor_label;
  FlagSet flags;
  flags.Int({"--pending"}, &queues.pending, 0, 1'000'000)
      .Int({"--queues"}, &queues.queues, 1, 100'000)
      .Int({"--cohorts"}, &queues.cohorts, 0, 100'000)
      .Int({"--nodes"}, &nodes, 1, 100'000)
      .Uint({"--seed"}, &seed)
      .Int({"--explain"}, &explain, 0, 1'000'000)
      .Int({"--repeat"}, &repeat, 1, 1000)
      .Int({"--cycles"}, &cycles, 1, 10'000)
      .Custom({"--occupied"},
              [&](const std::string& v) -> absl::Status {
                double f = 0;
                if (!absl::SimpleAtod(v, &f) || !(f >= 0 && f <= 1)) {
                  return absl::InvalidArgumentError(
                      absl::StrCat("want a fraction from 0 to 1, got ", Quoted(v)));
                }
                occupied = f;
                return absl::OkStatus();
              })
      .Custom({"--flavor-label"},
              [&](const std::string& v) -> absl::Status {
                std::vector<std::string> kv = absl::StrSplit(v, absl::MaxSplits('=', 1));
                if (v != "none" && (kv.size() != 2 || kv[0].empty())) {
                  return absl::InvalidArgumentError(
                      absl::StrCat("want KEY=VALUE or none, got ", Quoted(v)));
                }
                queues.flavor_label = v == "none" ? "" : kv[0];
                queues.flavor_value = v == "none" ? "" : kv.back();
                return absl::OkStatus();
              })
      .Bool({"--json"}, &json)
      .Bool({"--steady"}, &steady);
  if (absl::Status parsed = flags.Parse(args); !parsed.ok()) return BadInput(kCommand, parsed);
  // Queue q joins cohort q % cohorts: there are never more cohorts than queues.
  queues.cohorts = std::min(queues.cohorts, queues.queues);

  placement::SyntheticClusterOptions cluster_options{.topology = "eks-4layer", .nodes = nodes,
                                                     .occupancy = 0, .churn = 0, .seed = seed};
  absl::StatusOr<placement::SyntheticCluster> cluster =
      placement::BuildSyntheticCluster(cluster_options);
  if (!cluster.ok()) return BadInput(kCommand, cluster.status());
  queues.total_gpus = int64_t{nodes} * cluster_options.gpus_per_node;
  queues.seed = seed;
  if (occupied.has_value()) {
    if (steady) {
      return BadInput(kCommand, absl::InvalidArgumentError("--occupied and --steady exclude "
                                                           "each other"));
    }
    return RunLoaded(cluster->snapshot, nodes, queues, *occupied, cycles, json);
  }
  const admission::Snapshot base = admission::BuildSyntheticQueues(queues);

  // Each repetition is a fresh cluster and queue set: the machine's speed drifts by half from
  // one second to the next, so one cycle says little; the median of several says more.
  struct Run {
    double ms = 0, cpu = 0, placement_ms = 0;
    admission::CycleResult result;
  };
  std::vector<Run> runs;
  for (int r = 0; r < repeat; ++r) {
    placement::InProcessPlacementService service(cluster->snapshot);
    admission::Snapshot snapshot = base;
    if (steady) {
      admission::CycleResult fill = admission::RunAdmissionCycle(snapshot, service);
      snapshot = admission::SteadyStateQueues(std::move(snapshot), fill, queues);
    }
    TimedPlacementService timed(service);
    auto start = std::chrono::steady_clock::now();
    double cpu_start = CpuMs();
    Run run;
    run.result = admission::RunAdmissionCycle(snapshot, timed);
    run.cpu = CpuMs() - cpu_start;
    run.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                 .count();
    run.placement_ms = timed.ms();
    runs.push_back(std::move(run));
  }
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.cpu < b.cpu; });
  const Run& median = runs[runs.size() / 2];
  const admission::CycleResult& result = median.result;
  const double ms = median.ms;
  const double cpu = median.cpu;
  const double placement_ms = median.placement_ms;
  double per_second = cpu > 0 ? 1000.0 * static_cast<double>(result.admissions.size()) / cpu : 0;
  for (int i = 0; i < explain && i < static_cast<int>(result.pending.size()); ++i) {
    const admission::PendingDecision& p = result.pending[i];
    std::fprintf(stderr, "%s [%s]: %s\n", p.workload.c_str(),
                 std::string(admission::ToString(p.reason)).c_str(), p.message.c_str());
  }
  if (json) {
    std::printf(
        "{\"pending\":%d,\"queues\":%d,\"cohorts\":%d,\"nodes\":%d,\"steady\":%s,"
        "\"cycle_ms\":%.2f,\"cycle_cpu_ms\":%.2f,\"placement_cpu_ms\":%.2f,"
        "\"admission_cpu_ms\":%.2f,\"admitted\":%zu,\"preemptions\":%zu,\"still_pending\":%zu,"
        "\"admissions_per_second\":%.0f,\"round_trips\":%d,\"repeat\":%d,"
        "\"cycle_cpu_ms_min\":%.2f,\"cycle_cpu_ms_max\":%.2f}\n",
        queues.pending, queues.queues, queues.cohorts, nodes, steady ? "true" : "false", ms,
        cpu, placement_ms, cpu - placement_ms, result.admissions.size(),
        result.preemptions.size(), result.pending.size(), per_second, result.calls.Total(),
        repeat, runs.front().cpu, runs.back().cpu);
  } else {
    std::printf("admission cycle: %d pending over %d ClusterQueues in %d cohorts, %d nodes%s\n",
                queues.pending, queues.queues, queues.cohorts, nodes,
                steady ? " (steady state)" : "");
    std::printf("  %.2f ms wall, %.2f ms CPU (%.2f ms in the placement service, %.2f ms in "
                "admission), %zu admitted (%.0f admissions per CPU second), %zu preemptions, %zu "
                "pending, %d placement round trips\n",
                ms, cpu, placement_ms, cpu - placement_ms, result.admissions.size(), per_second,
                result.preemptions.size(), result.pending.size(), result.calls.Total());
    std::printf("  median of %d cycles; CPU min %.2f ms, max %.2f ms\n", repeat, runs.front().cpu,
                runs.back().cpu);
  }
  return kExitOk;
}

PHALANX_COMMAND("bench admission", "time one admission cycle (10,000 pending, 100 queues)",
                kUsage, RunBenchAdmission);

}  // namespace
}  // namespace phalanx::cli
