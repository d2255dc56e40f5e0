#include "cli/invariants.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/resources.h"
#include "common/status.h"
#include "kube/decode.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace phalanx::cli {
namespace {

constexpr char kJobLabel[] = "phalanx.dev/job";
constexpr char kRankLabel[] = "phalanx.dev/rank";

bool Finished(const kube::TrainingJob& job) { return kube::FinishedPhase(job.status.phase); }
bool PodFinished(const kube::Pod& pod) { return kube::FinishedPhase(pod.phase); }
// Holds its node's devices: bound and not finished (terminating pods still run).
bool HoldsNode(const kube::Pod& pod) { return !pod.node_name.empty() && !PodFinished(pod); }
// Counts as one of the job's running ranks: holds its node and is not on its way out.
bool Live(const kube::Pod& pod) { return !PodFinished(pod) && pod.meta.deletion_timestamp.empty(); }

int64_t Gpus(const kube::Pod& pod) {
  auto it = pod.requests.find(kResourceGpu);
  return it == pod.requests.end() ? 0 : it->second;
}

// The TrainingJob owning `pod` (by the controller reference's uid when it has one), keyed
// "namespace/name"; "" if it is not a gang pod.
std::string OwnerKey(const kube::Pod& pod) {
  const std::string* job = pod.meta.labels.Find(kJobLabel);
  if (job == nullptr) return "";
  return absl::StrCat(pod.meta.namespace_, "/", *job);
}

}  // namespace

absl::StatusOr<ClusterState> DecodeClusterState(const std::vector<std::string>& jobs,
                                                const std::vector<std::string>& pods,
                                                const std::vector<std::string>& nodes) {
  ClusterState state;
  for (size_t i = 0; i < jobs.size(); ++i) {
    // Metadata and status are all the invariants read: a job whose spec cannot be read (a
    // template quantity that is not one) is checked like any other, instead of failing the
    // whole check.
    absl::StatusOr<kube::TrainingJob> job = kube::DecodeTrainingJobWithoutSpec(jobs[i]);
    if (!job.ok()) return Annotate(job.status(), absl::StrCat("TrainingJob item ", i));
    state.jobs.push_back(*std::move(job));
  }
  kube::Decoder decoder;
  for (size_t i = 0; i < pods.size(); ++i) {
    absl::StatusOr<kube::Pod> pod = decoder.Decode<kube::Pod>(pods[i]);
    if (!pod.ok()) return Annotate(pod.status(), absl::StrCat("pod item ", i));
    state.pods.push_back(*std::move(pod));
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    absl::StatusOr<kube::Node> node = decoder.Decode<kube::Node>(nodes[i]);
    if (!node.ok()) return Annotate(node.status(), absl::StrCat("node item ", i));
    state.nodes.push_back(*std::move(node));
  }
  return state;
}

bool IsImmediate(const Violation& violation) {
  return violation.invariant == "node_overcommitted" || violation.invariant == "job_lost";
}

std::map<std::string, int> PhaseCounts(const ClusterState& state) {
  std::map<std::string, int> counts;
  for (const kube::TrainingJob& job : state.jobs) ++counts[job.status.phase];
  return counts;
}

std::vector<Violation> CheckInvariants(const ClusterState& state,
                                       const InvariantOptions& options) {
  std::vector<Violation> out;
  auto add = [&](std::string invariant, std::string object, std::string message) {
    out.push_back({std::move(invariant), std::move(object), std::move(message)});
  };

  std::unordered_map<std::string, const kube::TrainingJob*> jobs;
  for (const kube::TrainingJob& job : state.jobs) jobs[job.meta.Key()] = &job;

  // job_lost
  for (const std::string& key : options.expected_jobs) {
    if (!jobs.contains(key)) add("job_lost", key, "created, but no such TrainingJob any more");
  }

  // The live pods of each job. A pod whose controller is a TrainingJob of another uid (an older
  // job of the same name) is not this job's.
  std::unordered_map<std::string, std::vector<const kube::Pod*>> pods_of;
  for (const kube::Pod& pod : state.pods) {
    std::string key = OwnerKey(pod);
    if (key.empty() || !Live(pod)) continue;
    auto job = jobs.find(key);
    const kube::OwnerReference* owner = pod.meta.ControllerRef();
    if (job != jobs.end() && owner != nullptr && owner->uid != job->second->meta.uid) continue;
    pods_of[key].push_back(&pod);
  }

  for (const kube::TrainingJob& job : state.jobs) {
    const std::string key = job.meta.Key();
    const std::vector<const kube::Pod*>& mine = pods_of[key];
    const bool admitted = job.status.admission.has_value() && !Finished(job);
    int bound = 0;
    for (const kube::Pod* pod : mine) bound += pod->node_name.empty() ? 0 : 1;
    if (!admitted) {
      if (bound > 0 && !Finished(job)) {
        add("admitted_twice", key,
            absl::StrCat("not admitted (phase ",
                         job.status.phase.empty() ? "none" : job.status.phase, ") but ", bound,
                         " live pods are bound"));
      }
      continue;
    }
    const int32_t replicas = job.status.admission->replicas;
    const std::vector<std::string> none;
    const std::vector<std::string>& placed =
        job.status.placement ? job.status.placement->nodes : none;
    if (static_cast<int32_t>(mine.size()) > replicas) {
      add("admitted_twice", key,
          absl::StrCat(mine.size(), " live pods for ", replicas, " admitted replicas"));
    }
    std::map<int, std::vector<const kube::Pod*>> by_rank;
    for (const kube::Pod* pod : mine) {
      int rank = -1;
      const std::string* label = pod->meta.labels.Find(kRankLabel);
      if (label == nullptr || !absl::SimpleAtoi(*label, &rank) || rank < 0) {
        add("admitted_twice", key, absl::StrCat("pod ", pod->meta.name, " has no rank label"));
        continue;
      }
      by_rank[rank].push_back(pod);
      if (pod->node_name.empty()) continue;
      if (rank >= static_cast<int>(placed.size())) {
        add("admitted_twice", key,
            absl::StrCat("pod ", pod->meta.name, " (rank ", rank, ") is bound to ",
                         pod->node_name.str(), " but status.placement lists ", placed.size(),
                         " nodes"));
      } else if (pod->node_name != placed[rank]) {
        add("admitted_twice", key,
            absl::StrCat("pod ", pod->meta.name, " (rank ", rank, ") is bound to ",
                         pod->node_name.str(), ", status.placement says ", placed[rank]));
      }
    }
    for (const auto& [rank, pods] : by_rank) {
      if (pods.size() > 1) {
        add("admitted_twice", key, absl::StrCat(pods.size(), " live pods claim rank ", rank));
      }
    }
    // partial_gang: some ranks bound, not all.
    if (bound > 0 && bound < replicas) {
      std::vector<int> unbound;
      for (int r = 0; r < replicas; ++r) {
        auto it = by_rank.find(r);
        bool has = it != by_rank.end() &&
                   std::any_of(it->second.begin(), it->second.end(),
                               [](const kube::Pod* p) { return !p->node_name.empty(); });
        if (!has) unbound.push_back(r);
      }
      add("partial_gang", key,
          absl::StrCat(bound, " of ", replicas, " ranks bound; without a bound pod: ranks ",
                       absl::StrJoin(unbound, ",")));
    }
  }

  // node_overcommitted
  std::map<std::string, int64_t> used;
  std::map<std::string, std::vector<std::string>> holders;
  for (const kube::Pod& pod : state.pods) {
    if (!HoldsNode(pod) || Gpus(pod) == 0) continue;
    used[pod.node_name.str()] += Gpus(pod);
    holders[pod.node_name.str()].push_back(pod.meta.Key());
  }
  std::unordered_map<std::string, int64_t> allocatable;
  for (const kube::Node& node : state.nodes) {
    auto it = node.allocatable.find(kResourceGpu);
    allocatable[node.meta.name] = it == node.allocatable.end() ? 0 : it->second;
  }
  for (const auto& [node, gpus] : used) {
    auto it = allocatable.find(node);
    int64_t have = it == allocatable.end() ? 0 : it->second;
    if (gpus > have) {
      add("node_overcommitted", node,
          absl::StrCat(gpus, " GPUs requested by bound pods (", absl::StrJoin(holders[node], " "),
                       "), ", have, " allocatable",
                       it == allocatable.end() ? " (no such node)" : ""));
    }
  }

  // Reservations against the jobs.
  if (state.reservations.has_value()) {
    std::set<std::string> reserved;
    for (const placement::ReservationSummary& r : *state.reservations) {
      reserved.insert(r.job);
      auto it = jobs.find(r.job);
      if (it == jobs.end()) {
        add("reservation_orphan", r.job, "phalanx-scheduler holds a reservation for no job");
        continue;
      }
      const kube::TrainingJob& job = *it->second;
      if (Finished(job) || !job.status.admission) {
        add("reservation_orphan", r.job,
            absl::StrCat("phalanx-scheduler holds a reservation of ", r.nodes.size(),
                         " nodes for a job that is ",
                         Finished(job) ? job.status.phase : std::string("not admitted")));
        continue;
      }
      const std::vector<std::string> none;
      const std::vector<std::string>& placed =
          job.status.placement ? job.status.placement->nodes : none;
      if (r.nodes != placed) {
        add("reservation_mismatch", r.job,
            absl::StrCat("reserved on [", absl::StrJoin(r.nodes, " "),
                         "], status.placement says [", absl::StrJoin(placed, " "), "]"));
      }
    }
    for (const kube::TrainingJob& job : state.jobs) {
      if (Finished(job) || !job.status.admission || !job.status.placement ||
          job.status.placement->nodes.empty() || reserved.contains(job.meta.Key())) {
        continue;
      }
      add("reservation_missing", job.meta.Key(),
          absl::StrCat("admitted and placed on ", job.status.placement->nodes.size(),
                       " nodes, but phalanx-scheduler holds no reservation for it"));
    }
  }

  std::sort(out.begin(), out.end(), [](const Violation& a, const Violation& b) {
    return std::tie(a.invariant, a.object, a.message) < std::tie(b.invariant, b.object, b.message);
  });
  return out;
}

std::string FormatCheck(const CheckReport& report, bool json) {
  if (!json) {
    std::string out;
    for (const Violation& v : report.violations) {
      absl::StrAppend(&out, v.invariant, " ", v.object, ": ", v.message, "\n");
    }
    std::vector<std::string> phases;
    for (const auto& [phase, n] : report.phases) {
      phases.push_back(absl::StrCat(phase.empty() ? "(none)" : phase, "=", n));
    }
    absl::StrAppend(&out, report.violations.empty() ? "ok" : "VIOLATED", ": ",
                    report.violations.size(), " violations; ", report.jobs, " jobs (",
                    absl::StrJoin(phases, " "), "), ", report.pods, " pods, ", report.nodes,
                    " nodes");
    if (report.reservations) absl::StrAppend(&out, ", ", *report.reservations, " reservations");
    absl::StrAppend(&out, "; ", report.reads, " reads over ",
                    absl::StrFormat("%.1f", report.seconds), " s\n");
    return out;
  }
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  auto key = [&](std::string_view k) {
    w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
  };
  auto str = [&](std::string_view v) {
    w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
  };
  w.StartObject();
  key("ok");
  w.Bool(report.violations.empty());
  key("invariant_violations");
  w.Int64(static_cast<int64_t>(report.violations.size()));
  key("violations");
  w.StartArray();
  for (const Violation& v : report.violations) {
    w.StartObject();
    key("invariant");
    str(v.invariant);
    key("object");
    str(v.object);
    key("message");
    str(v.message);
    w.EndObject();
  }
  w.EndArray();
  key("jobs");
  w.Int(report.jobs);
  key("phases");
  w.StartObject();
  for (const auto& [phase, n] : report.phases) {
    key(phase);
    w.Int(n);
  }
  w.EndObject();
  key("pods");
  w.Int(report.pods);
  key("nodes");
  w.Int(report.nodes);
  key("reservations");
  if (report.reservations) {
    w.Int(*report.reservations);
  } else {
    w.Null();
  }
  key("reads");
  w.Int(report.reads);
  key("seconds");
  w.Double(report.seconds);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace phalanx::cli
