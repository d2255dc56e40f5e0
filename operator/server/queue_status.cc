// ComputeQueueStatuses and the status apply bodies of queue_objects.h.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/resources.h"
#include "kube/json.h"
#include "operator/admission/model.h"
#include "operator/admission/quota.h"
#include "operator/server/queue_objects.h"
#include "rapidjson/document.h"

namespace phalanx::operator_server {
namespace {

using admission::FrId;
using rapidjson::Value;
using Alloc = rapidjson::Document::AllocatorType;

constexpr std::string_view kApiVersion = "phalanx.dev/v1alpha1";

// Kueue's weightedShare: the share x1000, truncated as Kueue's integer arithmetic does (the
// epsilon keeps 0.29 * 1000 from truncating to 289).
int64_t WeightedShare(double share) {
  if (std::isinf(share)) return kInfiniteWeightedShare;
  return static_cast<int64_t>(std::floor(share * 1000 + 1e-6));
}

// Usage summed per (flavor, resource), for a LocalQueue: its workloads never borrow on their own.
using UsageByFlavor = std::map<std::string, std::map<std::string, int64_t>>;

std::vector<FlavorUsage> ToFlavorsUsage(const UsageByFlavor& usage) {
  std::vector<FlavorUsage> out;
  for (const auto& [flavor, resources] : usage) {
    FlavorUsage& f = out.emplace_back();
    f.flavor = flavor;
    for (const auto& [resource, total] : resources) f.resources.push_back({resource, total, 0});
  }
  return out;
}

// Every flavor and resource of the queue's spec, in its order, with the usage charged to it.
std::vector<FlavorUsage> ClusterQueueUsage(const admission::Model& model,
                                           const admission::QuotaTree& quota, int cq) {
  std::vector<FlavorUsage> out;
  for (const admission::ResourceGroup& group : model.cqs[cq].spec->resource_groups) {
    for (const admission::FlavorQuotas& fq : group.flavors) {
      FlavorUsage& f = out.emplace_back();
      f.flavor = fq.flavor;
      int flavor = model.flavor_index.at(fq.flavor);
      for (const admission::ResourceQuota& q : fq.resources) {
        FrId fr = model.fr_ids.at({flavor, q.resource});
        int64_t total = quota.Usage(cq, fr);
        f.resources.push_back(
            {q.resource, total, std::max<int64_t>(0, total - quota.Nominal(cq, fr))});
      }
    }
  }
  return out;
}

// The conditions of a queue: only Active (metav1.Condition).
Value ActiveConditions(const std::string& inactive_reason, std::string_view inactive_code,
                       std::string_view ready_message, std::string_view last_transition,
                       int64_t observed_generation, Alloc& alloc) {
  bool active = inactive_reason.empty();
  Value condition(rapidjson::kObjectType);
  condition.AddMember("type", "Active", alloc);
  condition.AddMember("status", rapidjson::StringRef(active ? "True" : "False"), alloc);
  condition.AddMember("reason", kube::JsonString(active ? "Ready" : inactive_code, alloc), alloc);
  condition.AddMember("message",
                      kube::JsonString(active ? ready_message : inactive_reason, alloc), alloc);
  condition.AddMember("lastTransitionTime", kube::JsonString(last_transition, alloc), alloc);
  if (observed_generation > 0) {
    condition.AddMember("observedGeneration", observed_generation, alloc);
  }
  Value conditions(rapidjson::kArrayType);
  conditions.PushBack(condition, alloc);
  return conditions;
}

// A status apply body with the workload counts every queue status has.
rapidjson::Document StatusBody(std::string_view kind, const std::string& name,
                               const std::string& namespace_name, int32_t pending,
                               int32_t admitted) {
  rapidjson::Document doc = kube::NewApiObject(kApiVersion, kind, name, namespace_name);
  Alloc& alloc = doc.GetAllocator();
  Value status(rapidjson::kObjectType);
  status.AddMember("pendingWorkloads", pending, alloc);
  status.AddMember("admittedWorkloads", admitted, alloc);
  doc.AddMember("status", status, alloc);
  return doc;
}

}  // namespace

QueueStatuses ComputeQueueStatuses(const admission::Snapshot& snapshot) {
  const admission::Model model = admission::CompileModel(snapshot);
  admission::QuotaTree quota(model);
  QueueStatuses out;

  // model.cqs index -> out.cluster_queues index (duplicates and nameless queues get none).
  std::vector<int> cq_status(model.cqs.size(), -1);
  for (const admission::ClusterQueue& spec : snapshot.cluster_queues) {
    auto it = model.cq_index.find(spec.name);
    if (it == model.cq_index.end() || model.cqs[it->second].spec != &spec) continue;
    cq_status[it->second] = static_cast<int>(out.cluster_queues.size());
    ClusterQueueStatus& status = out.cluster_queues.emplace_back();
    status.name = spec.name;
    const admission::CompiledClusterQueue& compiled = model.cqs[it->second];
    status.inactive_reason = compiled.inactive;
    if (status.inactive_reason.empty() && !compiled.held.empty()) {
      status.inactive_reason = compiled.held;
      status.inactive_condition_reason = spec.terminating ? "Terminating" : "Stopped";
    }
  }
  std::map<std::pair<std::string, std::string>, int> lq_status;
  for (const admission::LocalQueue& lq : snapshot.local_queues) {
    auto key = std::make_pair(lq.namespace_name, lq.name);
    if (!lq_status.emplace(key, static_cast<int>(out.local_queues.size())).second) continue;
    LocalQueueStatus& status = out.local_queues.emplace_back();
    status.namespace_name = lq.namespace_name;
    status.name = lq.name;
    int cq = model.local_queues.at(key);
    // Kueue's LocalQueue reasons, in its order: its own stopPolicy, then its ClusterQueue
    // missing or inactive (whose message says why).
    if (auto stop = model.local_queue_stops.find(key); stop != model.local_queue_stops.end()) {
      status.inactive_reason = stop->second.message;
      status.inactive_condition_reason = "Stopped";
    } else if (cq < 0) {
      status.inactive_reason =
          absl::StrCat("ClusterTrainingQueue ", lq.cluster_queue, " does not exist");
      status.inactive_condition_reason = "ClusterTrainingQueueDoesNotExist";
    } else if (cq_status[cq] >= 0 && !out.cluster_queues[cq_status[cq]].inactive_reason.empty()) {
      status.inactive_reason = out.cluster_queues[cq_status[cq]].inactive_reason;
      status.inactive_condition_reason = "ClusterTrainingQueueIsInactive";
    }
  }

  std::vector<UsageByFlavor> lq_usage(out.local_queues.size());
  for (const admission::Workload& w : snapshot.workloads) {
    auto lq = lq_status.find({w.namespace_name, w.queue_name});
    LocalQueueStatus* local = lq == lq_status.end() ? nullptr : &out.local_queues[lq->second];
    if (!w.admitted.has_value()) {
      if (local == nullptr) continue;
      ++local->pending;
      int cq = model.local_queues.at(lq->first);
      if (cq >= 0 && cq_status[cq] >= 0) ++out.cluster_queues[cq_status[cq]].pending;
      continue;
    }
    auto cq = model.cq_index.find(w.admitted->cluster_queue);
    if (cq != model.cq_index.end() && cq_status[cq->second] >= 0) {
      ++out.cluster_queues[cq_status[cq->second]].admitted;
    }
    admission::Demand demand;
    if (cq != model.cq_index.end()) {
      demand = admission::Scale(admission::AdmittedDemand(model, quota, cq->second, w),
                                w.admitted->count);
      quota.Add(cq->second, demand, +1);
    }
    if (local == nullptr) continue;
    ++local->admitted;
    for (const auto& [fr, amount] : demand) {
      const auto& [flavor, resource] = model.frs[fr];
      lq_usage[lq->second][model.flavors[flavor]->name][resource] += amount;
    }
  }

  for (size_t cq = 0; cq < model.cqs.size(); ++cq) {
    if (cq_status[cq] < 0 || !model.cqs[cq].inactive.empty()) continue;
    ClusterQueueStatus& status = out.cluster_queues[cq_status[cq]];
    status.flavors_usage = ClusterQueueUsage(model, quota, static_cast<int>(cq));
    status.weighted_share = WeightedShare(quota.Share(static_cast<int>(cq), {}, 0));
  }
  for (size_t i = 0; i < out.local_queues.size(); ++i) {
    out.local_queues[i].flavors_usage = ToFlavorsUsage(lq_usage[i]);
  }
  return out;
}

void AddPendingJobs(const admission::Snapshot& snapshot,
                    const std::vector<admission::PendingDecision>& pending, int max_jobs,
                    QueueStatuses& statuses) {
  if (max_jobs <= 0) return;
  std::map<std::pair<std::string_view, std::string_view>, LocalQueueStatus*> local;
  for (LocalQueueStatus& lq : statuses.local_queues) {
    local.emplace(std::make_pair(std::string_view(lq.namespace_name), std::string_view(lq.name)),
                  &lq);
  }
  std::map<std::string_view, const admission::Workload*> workloads;
  for (const admission::Workload& w : snapshot.workloads) {
    if (!w.admitted.has_value()) workloads.emplace(w.key, &w);
  }
  for (const admission::PendingDecision& p : pending) {
    if (p.position <= 0) continue;
    auto w = workloads.find(p.workload);
    if (w == workloads.end()) continue;
    auto lq = local.find({w->second->namespace_name, w->second->queue_name});
    if (lq == local.end()) continue;
    lq->second->pending_jobs.push_back(
        {p.workload.substr(w->second->namespace_name.size() + 1), p.position});
  }
  for (LocalQueueStatus& lq : statuses.local_queues) {
    auto& jobs = lq.pending_jobs;
    std::sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) {
      return a.position_in_cluster_queue < b.position_in_cluster_queue;
    });
    if (jobs.size() > static_cast<size_t>(max_jobs)) jobs.resize(max_jobs);
  }
}

std::string ClusterQueueStatusApply(const ClusterQueueStatus& status,
                                    std::string_view now_rfc3339) {
  rapidjson::Document doc =
      StatusBody("ClusterTrainingQueue", status.name, "", status.pending, status.admitted);
  Alloc& alloc = doc.GetAllocator();
  Value& body = doc["status"];
  Value flavors(rapidjson::kArrayType);
  for (const FlavorUsage& flavor : status.flavors_usage) {
    Value resources(rapidjson::kArrayType);
    for (const ResourceUsage& r : flavor.resources) {
      Value usage(rapidjson::kObjectType);
      usage.AddMember("name", kube::JsonString(r.resource, alloc), alloc);
      usage.AddMember("total", kube::JsonString(FormatQuantity(r.resource, r.total), alloc), alloc);
      usage.AddMember("borrowed", kube::JsonString(FormatQuantity(r.resource, r.borrowed), alloc),
                      alloc);
      resources.PushBack(usage, alloc);
    }
    Value entry(rapidjson::kObjectType);
    entry.AddMember("name", kube::JsonString(flavor.flavor, alloc), alloc);
    entry.AddMember("resources", resources, alloc);
    flavors.PushBack(entry, alloc);
  }
  body.AddMember("flavorsUsage", flavors, alloc);
  Value fair(rapidjson::kObjectType);
  fair.AddMember("weightedShare", status.weighted_share, alloc);
  body.AddMember("fairSharing", fair, alloc);
  body.AddMember("conditions",
                 ActiveConditions(status.inactive_reason, status.inactive_condition_reason,
                                  "Can admit new workloads", now_rfc3339,
                                  status.observed_generation, alloc),
                 alloc);
  return kube::ToJson(doc);
}

std::string LocalQueueStatusApply(const LocalQueueStatus& status, std::string_view now_rfc3339) {
  rapidjson::Document doc = StatusBody("TrainingQueue", status.name, status.namespace_name,
                                       status.pending, status.admitted);
  Alloc& alloc = doc.GetAllocator();
  doc["status"].AddMember(
      "conditions",
      ActiveConditions(status.inactive_reason, status.inactive_condition_reason,
                       "Can submit new workloads to its ClusterTrainingQueue", now_rfc3339,
                       status.observed_generation, alloc),
      alloc);
  // Always written, empty too: an apply that leaves the field out would keep the last list.
  Value jobs(rapidjson::kArrayType);
  for (size_t i = 0; i < status.pending_jobs.size(); ++i) {
    Value job(rapidjson::kObjectType);
    job.AddMember("name", kube::JsonString(status.pending_jobs[i].name, alloc), alloc);
    job.AddMember("positionInQueue", static_cast<int32_t>(i + 1), alloc);
    job.AddMember("positionInClusterQueue", status.pending_jobs[i].position_in_cluster_queue,
                  alloc);
    jobs.PushBack(job, alloc);
  }
  doc["status"].AddMember("pendingJobs", jobs, alloc);
  return kube::ToJson(doc);
}

}  // namespace phalanx::operator_server
