// `phalanx demo`: a short tour of the placement core on a small built-in cluster — a 64-GPU
// pre-training gang, an elastic job, a gang that cannot fit (with its explanation) and a
// preemption plan — printing where each lands. Runs in well under a second and exits 0.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "scheduler/in_process_placement_service.h"
#include "scheduler/synthetic_cluster.h"

namespace phalanx::cli {
namespace {

using placement::ElasticRange;
using placement::GangRequest;
using placement::PlacementResult;
using placement::PreemptionPlan;
using placement::RunningGang;

constexpr char kUsage[] = R"(Usage: phalanx demo

Builds a small cluster (64 p5.48xlarge nodes, 8 H100 GPUs each, EKS 3-layer network topology,
partly busy with a mix of jobs) and walks through what the placement core decides:
a 64-GPU gang, an elastic job, a gang that cannot fit and why, and a preemption plan.)";

constexpr char kLayer2[] = "topology.k8s.aws/network-node-layer-2";
constexpr char kLayer3[] = "topology.k8s.aws/network-node-layer-3";

// "node-00016 x2, node-00017, ..." in rank order.
std::string Ranks(const std::vector<std::string>& nodes) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < nodes.size();) {
    size_t j = i;
    while (j < nodes.size() && nodes[j] == nodes[i]) ++j;
    parts.push_back(j - i > 1 ? absl::StrCat(nodes[i], " x", j - i) : nodes[i]);
    i = j;
  }
  return absl::StrJoin(parts, ", ");
}

void Show(const absl::StatusOr<PlacementResult>& result) {
  if (!result.ok()) {
    std::printf("   -> error: %s\n", result.status().ToString().c_str());
  } else if (result->placed) {
    std::printf("   -> placed %zu pods in %s\n      ranks 0..%zu on: %s\n",
                result->placement.nodes.size(), result->placement.domain.ToString().c_str(),
                result->placement.nodes.size() - 1, Ranks(result->placement.nodes).c_str());
  } else {
    std::printf("   -> not placed: %s\n", result->explanation.summary.c_str());
  }
}

int RunDemo(const std::vector<std::string>& args) {
  if (absl::Status parsed = FlagSet().Parse(args); !parsed.ok()) return BadInput("demo", parsed);
  placement::SyntheticClusterOptions options{.topology = "eks", .nodes = 64, .nodes_per_leaf = 8,
                                             .fanout = 2, .occupancy = 0.55, .seed = 7};
  absl::StatusOr<placement::SyntheticCluster> cluster = placement::BuildSyntheticCluster(options);
  if (!cluster.ok()) {
    std::fprintf(stderr, "phalanx demo: %s\n", cluster.status().ToString().c_str());
    return kExitFailure;
  }
  std::vector<std::string> background = cluster->jobs;
  std::printf(
      "Cluster: 64 p5.48xlarge nodes (512 H100 GPUs), EKS topology: 2 layer-1, 4 layer-2 and\n"
      "8 layer-3 network domains of 8 nodes; %lld GPUs busy with %zu running jobs.\n\n",
      static_cast<long long>(cluster->used_gpus), background.size());
  placement::InProcessPlacementService service(std::move(cluster->snapshot));

  auto gang = [&](const char* job, int32_t pods, const char* level, const char* story) {
    std::printf("%s", story);
    GangRequest request = placement::GpuGang(job, pods, 8, options);
    request.required_level = level;
    return request;
  };
  GangRequest llama = gang("demo/llama-70b", 8, kLayer3,
                           "1. Pre-training gang demo/llama-70b: 8 pods x 8 GPUs, all in one "
                           "layer-3 domain\n");
  Show(service.Reserve(llama));
  GangRequest finetune = gang("demo/finetune", 0, kLayer2,
                              "\n2. Elastic fine-tune demo/finetune: 2..12 pods (step 2) x 8 "
                              "GPUs in one layer-2 domain\n");
  finetune.elastic = ElasticRange{2, 12, 2};
  Show(service.Reserve(finetune));
  Show(service.Reserve(gang("demo/too-big", 12, kLayer3,
                            "\n3. demo/too-big: 12 pods x 8 GPUs in one layer-3 domain (a domain "
                            "has 8 nodes)\n")));
  GangRequest urgent = gang("demo/urgent", 8, kLayer3,
                            "\n4. Urgent demo/urgent (priority 100): 8 pods x 8 GPUs in one "
                            "layer-3 domain;\n   every other job runs at priority 0 and may be "
                            "shrunk or evicted\n");
  urgent.priority = 100;
  std::vector<RunningGang> candidates = {{"demo/finetune", 0, finetune.elastic}};
  for (const std::string& job : background) candidates.push_back({job, 0, std::nullopt});
  candidates.push_back({"demo/llama-70b", 0, std::nullopt});
  absl::StatusOr<PreemptionPlan> plan = service.PlanPreemption(urgent, candidates);
  if (!plan.ok()) {
    std::printf("   -> error: %s\n", plan.status().ToString().c_str());
  } else if (!plan->feasible) {
    std::printf("   -> no plan: %s\n", plan->explanation.summary.c_str());
  } else if (plan->victims.empty()) {
    std::printf("   -> fits without preemption in %s\n", plan->placement.domain.ToString().c_str());
  } else {
    for (const placement::Victim& victim : plan->victims) {
      if (victim.new_count == 0) {
        std::printf("   -> evict  %s\n", victim.job.c_str());
      } else {
        std::printf("   -> shrink %s to %d pods\n", victim.job.c_str(), victim.new_count);
      }
    }
    std::printf("   -> then it lands in %s on: %s\n", plan->placement.domain.ToString().c_str(),
                Ranks(plan->placement.nodes).c_str());
  }
  std::printf("\nNothing was bound: this is the placement core alone. `phalanx bench placement`\n"
              "times it on 4,096 nodes.\n");
  return kExitOk;
}

PHALANX_COMMAND("demo", "a short tour of gang placement on a small built-in cluster", kUsage,
                RunDemo);

}  // namespace
}  // namespace phalanx::cli
