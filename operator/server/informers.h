// Every object phalanx-operator watches, each in one shared informer: both controllers read
// these caches and are woken by their events; nothing polls the API server.
#pragma once

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "common/api_labels.h"
#include "kube/api/resources.h"
#include "kube/api/training_job.h"
#include "kube/informer.h"
#include "operator/server/create_failures.h"
#include "operator/server/template_checks.h"

namespace phalanx::operator_server {

// Pods are indexed by the job that owns them (label phalanx.dev/job, same namespace).
inline constexpr char kIndexByJob[] = "job";

struct Informers {
  explicit Informers(kube::Client& client)
      : jobs(client, kube::TrainingJobs()),
        cluster_queues(client, kube::ClusterTrainingQueues()),
        local_queues(client, kube::TrainingQueues()),
        flavors(client, kube::NodeFlavors()),
        topologies(client, kube::NetworkTopologies()),
        priority_classes(client, kube::PriorityClasses()),
        namespaces(client, kube::Namespaces()),
        resource_quotas(client, kube::ResourceQuotas()),
        limit_ranges(client, kube::LimitRanges()),
        // Only the operator's own pods: those labelled with a job.
        pods(client, kube::Pods(), {.reflector = {.label_selector = std::string(kJobLabel)}}),
        nodes(client, kube::Nodes()) {
    pods.AddIndexer(kIndexByJob, [](const kube::Pod& p) {
      const std::string* job = p.meta.labels.Find(std::string(kJobLabel));
      return job == nullptr ? std::vector<std::string>{}
                            : std::vector<std::string>{p.meta.namespace_ + "/" + *job};
    });
  }

  void Start(const kube::Cancellation* stop) {
    threads_.emplace_back([this, stop] { jobs.Run(stop); });
    threads_.emplace_back([this, stop] { cluster_queues.Run(stop); });
    threads_.emplace_back([this, stop] { local_queues.Run(stop); });
    threads_.emplace_back([this, stop] { flavors.Run(stop); });
    threads_.emplace_back([this, stop] { topologies.Run(stop); });
    threads_.emplace_back([this, stop] { priority_classes.Run(stop); });
    threads_.emplace_back([this, stop] { namespaces.Run(stop); });
    threads_.emplace_back([this, stop] { resource_quotas.Run(stop); });
    threads_.emplace_back([this, stop] { limit_ranges.Run(stop); });
    threads_.emplace_back([this, stop] { pods.Run(stop); });
    threads_.emplace_back([this, stop] { nodes.Run(stop); });
  }
  // One deadline for all of them, as --sync-timeout-seconds promises.
  bool WaitForSync(absl::Duration timeout, const kube::Cancellation* stop) const {
    const absl::Time deadline = absl::Now() + timeout;
    auto left = [&] { return std::max(absl::ZeroDuration(), deadline - absl::Now()); };
    return jobs.WaitForSync(left(), stop) && cluster_queues.WaitForSync(left(), stop) &&
           local_queues.WaitForSync(left(), stop) && flavors.WaitForSync(left(), stop) &&
           topologies.WaitForSync(left(), stop) && priority_classes.WaitForSync(left(), stop) &&
           namespaces.WaitForSync(left(), stop) && resource_quotas.WaitForSync(left(), stop) &&
           limit_ranges.WaitForSync(left(), stop) && pods.WaitForSync(left(), stop) &&
           nodes.WaitForSync(left(), stop);
  }
  // Those not synced and why, "; "-separated (kube::Informer::SyncProblem).
  std::string SyncProblems() const {
    return kube::JoinSyncProblems(
        {jobs.SyncProblem(), cluster_queues.SyncProblem(), local_queues.SyncProblem(),
         flavors.SyncProblem(), topologies.SyncProblem(), priority_classes.SyncProblem(),
         namespaces.SyncProblem(), resource_quotas.SyncProblem(), limit_ranges.SyncProblem(),
         pods.SyncProblem(), nodes.SyncProblem()});
  }
  // After the cancellation passed to Start fired.
  void Join() {
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

  kube::Informer<kube::RawObject> jobs;
  kube::Informer<kube::RawObject> cluster_queues;
  kube::Informer<kube::RawObject> local_queues;
  kube::Informer<kube::RawObject> flavors;
  kube::Informer<kube::RawObject> topologies;
  kube::Informer<kube::RawObject> priority_classes;
  kube::Informer<kube::RawObject> namespaces;
  // Checked before a gang is admitted (namespace_quota.h).
  kube::Informer<kube::RawObject> resource_quotas;
  // Their Container defaults fill in the cpu and memory a template leaves unset, before the
  // API server's quota check sees the pods (namespace_quota.h, LimitRangeDefaults).
  kube::Informer<kube::RawObject> limit_ranges;
  kube::Informer<kube::Pod> pods;
  kube::Informer<kube::Node> nodes;
  // Not an informer: what the job controller learned creating pods that the API server's
  // objects do not show, for the admission controller's messages.
  CreateFailures create_failures;
  // What a dry run of each pending job's pod said of its template (template_checks.h).
  TemplateChecks template_checks;

 private:
  std::vector<std::thread> threads_;
};

}  // namespace phalanx::operator_server
