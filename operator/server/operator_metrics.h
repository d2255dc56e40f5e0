// phalanx-operator's Prometheus metrics. Names and labels follow Kueue's (kueue_pending_workloads
// -> phalanx_pending_workloads, ...) so dashboards and alerts carry over; docs/metrics.md lists
// them all.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/metrics/registry.h"

namespace phalanx::operator_server {

// Per ClusterTrainingQueue, the Unix time since which its longest-waiting pending TrainingJob has
// waited (QueuedSince). Each admission cycle replaces the whole map; a scrape reads it, so a
// queue with nothing pending has no series rather than a stale one, and the age keeps growing
// between cycles (time() - value) although nothing polls.
class OldestPending {
 public:
  void Replace(std::map<std::string, double> since) {
    std::lock_guard<std::mutex> lock(mu_);
    since_ = std::move(since);
  }
  std::vector<metrics::LabelledValue> Series() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<metrics::LabelledValue> out;
    for (const auto& [queue, since] : since_) out.push_back({.labels = {queue}, .value = since});
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, double> since_;
};

struct OperatorMetrics {
  explicit OperatorMetrics(metrics::Registry& r)
      : pending_workloads(r.AddGauge(
            "phalanx_pending_workloads",
            "TrainingJobs waiting for admission, by ClusterTrainingQueue and status (active: "
            "could be admitted when room appears; inadmissible: blocked by configuration or "
            "input).",
            {"cluster_queue", "status"})),
        admitted_active_workloads(r.AddGauge(
            "phalanx_admitted_active_workloads",
            "TrainingJobs admitted and not finished, by ClusterTrainingQueue.", {"cluster_queue"})),
        admitted_workloads_total(r.AddCounter("phalanx_admitted_workloads_total",
                                              "Admissions, by ClusterTrainingQueue.",
                                              {"cluster_queue"})),
        evicted_workloads_total(r.AddCounter(
            "phalanx_evicted_workloads_total",
            "Evictions of admitted TrainingJobs, by ClusterTrainingQueue and reason (Preempted, "
            "Suspended, NodeFailure, PodsReadyTimeout, ClusterTrainingQueueStopped, "
            "TrainingQueueStopped).",
            {"cluster_queue", "reason"})),
        preempted_workloads_total(
            r.AddCounter("phalanx_preempted_workloads_total",
                         "TrainingJobs evicted or shrunk by preemption, by the preemptor's "
                         "ClusterTrainingQueue and reason (InClusterQueue, InCohortReclamation, "
                         "InCohortReclaimWhileBorrowing, InCohortFairSharing).",
                         {"preempting_cluster_queue", "reason"})),
        cluster_queue_status(r.AddGauge(
            "phalanx_cluster_queue_status",
            "1 for the state each ClusterTrainingQueue is in, 0 for the others: active, pending "
            "(inactive or stopped), terminating (deleted, still charging running jobs).",
            {"cluster_queue", "status"})),
        admission_wait_time_seconds(r.AddHistogram(
            "phalanx_admission_wait_time_seconds",
            "Time from when a job last started waiting (created, or queued again after an "
            "eviction) to its admission, by ClusterTrainingQueue.",
            {"cluster_queue"},
            {1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400})),
        resource_usage(r.AddGauge("phalanx_cluster_queue_resource_usage",
                                  "Quota in use, by ClusterTrainingQueue, NodeFlavor and resource.",
                                  {"cluster_queue", "flavor", "resource"})),
        nominal_quota(r.AddGauge("phalanx_cluster_queue_nominal_quota",
                                 "Nominal quota, by ClusterTrainingQueue, NodeFlavor and resource.",
                                 {"cluster_queue", "flavor", "resource"})),
        borrowing_limit(r.AddGauge(
            "phalanx_cluster_queue_borrowing_limit",
            "Borrowing limit where one is set, by ClusterTrainingQueue, NodeFlavor and resource.",
            {"cluster_queue", "flavor", "resource"})),
        lending_limit(r.AddGauge(
            "phalanx_cluster_queue_lending_limit",
            "Lending limit where one is set, by ClusterTrainingQueue, NodeFlavor and resource.",
            {"cluster_queue", "flavor", "resource"})),
        admission_cycle_duration_seconds(r.AddHistogram(
            "phalanx_admission_cycle_duration_seconds",
            "Time of one admission cycle, Placement calls and status writes included.", {},
            metrics::Buckets::Latency())),
        admission_cycles_total(
            r.AddCounter("phalanx_admission_cycles_total", "Admission cycles run.")),
        placement_calls_total(
            r.AddCounter("phalanx_placement_calls_total",
                         "Calls to phalanx-scheduler's Placement service, by method.", {"method"})),
        placement_errors_total(r.AddCounter(
            "phalanx_placement_errors_total",
            "Admission attempts of a TrainingJob that a failed Placement call stopped "
            "(phalanx-scheduler unreachable, or an error it answered): one per job and cycle, "
            "as the PlacementError pending reason.")),
        placement_level_total(r.AddCounter(
            "phalanx_placement_level_total",
            "Admitted gangs by the topology level of the tightest domain holding them.",
            {"level"})),
        job_restarts_total(r.AddCounter("phalanx_job_restarts_total",
                                        "Gang restarts after a failed pod.", {"reason"})),
        jobs_finished_total(r.AddCounter("phalanx_jobs_finished_total",
                                         "TrainingJobs finished, by phase and the reason of "
                                         "their Succeeded or Failed condition.",
                                         {"phase", "reason"})),
        resize_events_total(r.AddCounter("phalanx_resize_events_total",
                                         "Elastic resizes, by direction (grow, shrink).",
                                         {"direction"})),
        pods_created_total(
            r.AddCounter("phalanx_pods_created_total", "Pods created for TrainingJobs.")),
        pod_create_conflicts_total(r.AddCounter(
            "phalanx_pod_create_conflicts_total",
            "Pod creates the API server answered AlreadyExists: the pod was there already (made "
            "by another writer, or by this operator longer ago than its wait for the pod "
            "informer).")),
        node_failures_total(
            r.AddCounter("phalanx_node_failures_total",
                         "Admitted TrainingJobs hit by failed nodes, by what the operator did "
                         "(replaced, shrunk, evicted) and why (NodeNotReady, NodeTainted, "
                         "NodeUnhealthy, NodeDeleted, NodeCordoned of the first failed node; "
                         "NodeFailure for evictions).",
                         {"action", "reason"})),
        node_replacements_total(r.AddCounter(
            "phalanx_node_replacements_total",
            "Failed nodes under admitted gangs whose ranks moved to healthy nodes, by reason.",
            {"reason"})),
        status_writes_total(
            r.AddCounter("phalanx_status_writes_total",
                         "Status and metadata writes to the API server, by object kind and result.",
                         {"kind", "result"})),
        endpoint_slice_writes_total(r.AddCounter(
            "phalanx_endpoint_slice_writes_total",
            "Writes of the TrainingJobs' EndpointSlices (the ranks' addresses under each job's "
            "headless Service), by operation (apply, delete) and result (ok, error).",
            {"op", "result"})),
        template_dry_runs_total(r.AddCounter(
            "phalanx_template_dry_runs_total",
            "Dry runs of a pending TrainingJob's pod (template_checks.h), by what the API server "
            "said: passed, refused (the template itself: an unknown field, an invalid value), "
            "refused_for_now (a 403 from an admission plugin; asked again), deferred (a 403 for a "
            "ResourceQuota, a LimitRange or the operator's RBAC, reported by the operator itself: "
            "counted as passed), unanswered (no verdict: counted as passed).",
            {"result"})),
        template_verdicts_shared_total(r.AddCounter(
            "phalanx_template_verdicts_shared_total",
            "Pending TrainingJobs that took a passed dry run of another job's pod of the same "
            "shape (same namespace; pods that differ only in the job's name, uid and size) "
            "instead of a dry run of their own.")) {
    r.AddCallbackGaugeFamily(
        "phalanx_oldest_pending_workload_timestamp_seconds",
        "Unix time since which the longest-waiting pending TrainingJob of each ClusterTrainingQueue has "
        "waited (its Queued condition turned True: creation, or its last eviction); no series "
        "while nothing is pending.",
        {"cluster_queue"}, [this] { return oldest_pending.Series(); });
    // Series that alerts take increase() of exist from the start at 0, so that the first event
    // after an operator start (a failover) counts: increase() misses a series born at 1.
    for (const char* reason : {"PodFailed", "NodeFailure", "PodFailureIgnored"}) {
      job_restarts_total.WithLabels({reason});
    }
    for (const char* direction : {"grow", "shrink"}) resize_events_total.WithLabels({direction});
    for (const char* method : {"ReserveBatch", "Reserve", "PlanPreemption", "EstimateStart",
                               "Release", "Resize", "ReplaceNodes"}) {
      placement_calls_total.WithLabels({method});
    }
    placement_errors_total.WithLabels({});
  }
  OperatorMetrics(const OperatorMetrics&) = delete;  // the callback above holds `this`
  OperatorMetrics& operator=(const OperatorMetrics&) = delete;

  metrics::Family<metrics::Gauge>& pending_workloads;
  metrics::Family<metrics::Gauge>& admitted_active_workloads;
  metrics::Family<metrics::Counter>& admitted_workloads_total;
  metrics::Family<metrics::Counter>& evicted_workloads_total;
  metrics::Family<metrics::Counter>& preempted_workloads_total;
  metrics::Family<metrics::Gauge>& cluster_queue_status;
  metrics::Family<metrics::Histogram>& admission_wait_time_seconds;
  metrics::Family<metrics::Gauge>& resource_usage;
  metrics::Family<metrics::Gauge>& nominal_quota;
  metrics::Family<metrics::Gauge>& borrowing_limit;
  metrics::Family<metrics::Gauge>& lending_limit;
  metrics::Family<metrics::Histogram>& admission_cycle_duration_seconds;
  metrics::Family<metrics::Counter>& admission_cycles_total;
  metrics::Family<metrics::Counter>& placement_calls_total;
  metrics::Family<metrics::Counter>& placement_errors_total;
  metrics::Family<metrics::Counter>& placement_level_total;
  metrics::Family<metrics::Counter>& job_restarts_total;
  metrics::Family<metrics::Counter>& jobs_finished_total;
  metrics::Family<metrics::Counter>& resize_events_total;
  metrics::Family<metrics::Counter>& pods_created_total;
  metrics::Family<metrics::Counter>& pod_create_conflicts_total;
  metrics::Family<metrics::Counter>& node_failures_total;
  metrics::Family<metrics::Counter>& node_replacements_total;
  metrics::Family<metrics::Counter>& status_writes_total;
  metrics::Family<metrics::Counter>& endpoint_slice_writes_total;
  metrics::Family<metrics::Counter>& template_dry_runs_total;
  metrics::Family<metrics::Counter>& template_verdicts_shared_total;
  OldestPending oldest_pending;
};

// The `result` label of phalanx_status_writes_total: "ok", "not_found" (the object went between
// the read and the write: a deletion, not a fault) or "error".
inline const char* WriteResult(const absl::Status& status) {
  return status.ok() ? "ok" : absl::IsNotFound(status) ? "not_found" : "error";
}

}  // namespace phalanx::operator_server
