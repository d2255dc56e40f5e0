// phalanx-operator's configuration: defaults, then a YAML file (--config), then flags, each
// overriding the one before (common/daemon/config_flags.h). OperatorUsage() lists every option.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace phalanx::operator_server {

struct OperatorConfig {
  std::string kubeconfig;  // "" = in-cluster service account
  std::string context;
  // phalanx-scheduler's phalanx.v1alpha1.Placement gRPC target.
  std::string placement_address = "127.0.0.1:9443";
  int placement_deadline_ms = 10000;
  // TLS to phalanx-scheduler (PEM files; scheduler/grpc/tls.h): the CA its certificate must
  // chain to, this client's certificate and key (for a scheduler that requires one), and the
  // name its certificate must carry when that is not the address's host.
  std::string placement_tls_ca;
  std::string placement_tls_cert;
  std::string placement_tls_key;
  std::string placement_tls_server_name;
  std::string health_address = "127.0.0.1:8081";
  bool leader_elect = true;
  std::string lease_namespace = "kube-system";
  std::string lease_name = "phalanx-operator";
  std::string identity;  // "" = <hostname>_<pid>
  std::string log_level = "info";
  // Job controller worker threads.
  int workers = 2;
  // Pod creates one job controller step keeps in flight at once (per worker).
  int write_concurrency = 8;
  // Status writes one admission cycle keeps in flight. Higher than write_concurrency: a
  // cycle's writes are all there at once, and the job controller's pod creates, which follow
  // each admission, compete with them for the API server (docs/benchmarks.md, the burst).
  int admission_write_concurrency = 32;
  // Threads writing Events from a bounded queue (kube::EventRecorderOptions::async_writers), so
  // status writes and pod creates never wait for them; 0 = each Event written in line.
  int event_writers = 4;
  // While an admission cycle writes its statuses, job controller workers and Event writers
  // wait up to this long before sending their own requests, so that on a saturated API server
  // the admissions land first (docs/operator.md "Admission writes first"); 0 = never wait.
  int admission_writes_first_ms = 5000;
  // Shortest time between two admission cycles: events arriving meanwhile are folded into the
  // next cycle, so a burst of 1,000 applies costs a few cycles, not 1,000.
  int min_cycle_interval_ms = 200;
  int sync_timeout_seconds = 300;
  // Kueue's Configuration.fairSharing.enable: order and preempt across a cohort's ClusterQueues
  // by weighted share (docs/admission.md "Fair sharing").
  bool fair_sharing = false;
  // Honour a TrainingJob's spec.priority (an integer any user who may create TrainingJobs can
  // set, above every PriorityClass). Off: priorities come only from PriorityClasses, which
  // admins control, as for pods and Kueue workloads; a waiting job that sets it is Invalid.
  bool allow_job_priority = false;
  // Dry-run a pending job's rank-0 pod before admitting it (docs/operator.md "The pod template,
  // checked before admission"); off, a template the API server refuses is found at the first
  // pod create, after admission.
  bool template_dry_run = true;
  // How long a node under an admitted gang must stay NotReady before its ranks are moved
  // (docs/operator.md "Faults"); taints and the HyperPod health label act at once.
  int not_ready_grace_seconds = 30;
  // Kueue's waitForPodsReady: an admitted gang that has not had every rank running for this long
  // (since its admission, or since it last stopped running) is evicted and requeued with an
  // exponential backoff (docs/operator.md "Pods ready"); 0 = off (the default, as in Kueue).
  int pods_ready_timeout_seconds = 0;
  // Kueue's requeuingStrategy: the n-th requeue waits base * 2^(n-1) s, at most max; after
  // limit requeues the job is suspended instead (-1 = no limit).
  int requeuing_backoff_base_seconds = 60;
  int requeuing_backoff_max_seconds = 3600;
  int requeuing_backoff_limit_count = -1;
  // Limits of the health port (docs/http-and-metrics.md "Limits").
  int http_read_timeout_seconds = 60;
  int http_max_connections = 512;
  // Of those, from one client address at most (0 = no limit).
  int http_max_connections_per_client = 32;
  // Each TrainingQueue's status lists its first this many pending jobs (0 = none).
  int queue_status_pending_jobs = 10;

  bool show_help = false;
  bool show_version = false;
};

absl::StatusOr<OperatorConfig> ParseOperatorFlags(const std::vector<std::string>& args);

std::string OperatorUsage();

}  // namespace phalanx::operator_server
