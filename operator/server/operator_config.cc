#include "operator/server/operator_config.h"

#include "common/daemon/config_flags.h"
#include "common/status.h"

namespace phalanx::operator_server {

absl::StatusOr<OperatorConfig> ParseOperatorFlags(const std::vector<std::string>& args) {
  OperatorConfig config;
  ConfigFlags flags("phalanx-operator");
  flags.String("kubeconfig", &config.kubeconfig)
      .String("context", &config.context)
      .Address("placementAddress", &config.placement_address)
      .Int("placementDeadlineMs", &config.placement_deadline_ms, 100, 600000)
      .String("placementTlsCa", &config.placement_tls_ca)
      .String("placementTlsCert", &config.placement_tls_cert)
      .String("placementTlsKey", &config.placement_tls_key)
      .String("placementTlsServerName", &config.placement_tls_server_name)
      .Address("healthAddress", &config.health_address)
      .Bool("leaderElect", &config.leader_elect)
      .String("leaseNamespace", &config.lease_namespace)
      .String("leaseName", &config.lease_name)
      .String("identity", &config.identity)
      .String("logLevel", &config.log_level)
      .Int("workers", &config.workers, 1, 64)
      .Int("writeConcurrency", &config.write_concurrency, 1, 64)
      .Int("admissionWriteConcurrency", &config.admission_write_concurrency, 1, 128)
      .Int("eventWriters", &config.event_writers, 0, 64)
      .Int("admissionWritesFirstMs", &config.admission_writes_first_ms, 0, 60000)
      .Int("minCycleIntervalMs", &config.min_cycle_interval_ms, 0, 60000)
      .Int("syncTimeoutSeconds", &config.sync_timeout_seconds, 1, 86400)
      .Bool("fairSharing", &config.fair_sharing)
      .Bool("allowJobPriority", &config.allow_job_priority)
      .Bool("templateDryRun", &config.template_dry_run)
      .Int("notReadyGraceSeconds", &config.not_ready_grace_seconds, 0, 86400)
      .Int("podsReadyTimeoutSeconds", &config.pods_ready_timeout_seconds, 0, 7 * 86400)
      .Int("requeuingBackoffBaseSeconds", &config.requeuing_backoff_base_seconds, 1, 86400)
      .Int("requeuingBackoffMaxSeconds", &config.requeuing_backoff_max_seconds, 1, 7 * 86400)
      .Int("requeuingBackoffLimitCount", &config.requeuing_backoff_limit_count, -1, 1000000)
      .Int("httpReadTimeoutSeconds", &config.http_read_timeout_seconds, 1, 3600)
      .Int("httpMaxConnections", &config.http_max_connections, 1, 65536)
      .Int("httpMaxConnectionsPerClient", &config.http_max_connections_per_client, 0, 65536)
      .Int("queueStatusPendingJobs", &config.queue_status_pending_jobs, 0, 100);
  ASSIGN_OR_RETURN(ConfigFlags::Parsed parsed, flags.Parse(args));
  config.show_help = parsed.help;
  config.show_version = parsed.version;
  return config;
}

std::string OperatorUsage() {
  return R"(phalanx-operator: admits TrainingJobs under ClusterTrainingQueue quotas (one
ReserveBatch per admission cycle against phalanx-scheduler), then runs each admitted job: its
headless Service and one pod per rank with the torchrun environment, phases from the pods, gang
restarts up to spec.failurePolicy.maxRestarts, suspend, ttlSecondsAfterFinished, and a finalizer
that releases the reservation when the job is deleted.

Usage: phalanx-operator [flags]

Flags (each also a key of the --config file, written without dashes in camelCase):
  --config FILE                YAML file with any of the keys below; flags override it
  --kubeconfig PATH            kubeconfig to use; empty (default) = in-cluster service account
  --context NAME               kubeconfig context (default: current-context)
  --placement-address H:P      phalanx-scheduler's Placement gRPC address (default 127.0.0.1:9443)
  --placement-deadline-ms N    deadline of each Placement call (default 10000)
  --placement-tls-ca FILE      call phalanx-scheduler over TLS, trusting the CAs of this PEM
                               bundle (default: plain text)
  --placement-tls-cert FILE    this client's PEM certificate and private key, for a scheduler
  --placement-tls-key FILE     that requires one (both or neither; need --placement-tls-ca)
  --placement-tls-server-name NAME
                               the name the scheduler's certificate must carry, when it is not
                               the host of --placement-address (e.g. the Service's DNS name)
  --health-address H:P         address of /healthz, /readyz and /metrics (default 127.0.0.1:8081)
  --leader-elect true|false    take a coordination.k8s.io Lease before acting (default true);
                               standbys serve /healthz and wait
  --lease-namespace NS         namespace of the Lease (default kube-system)
  --lease-name NAME            name of the Lease (default phalanx-operator)
  --identity ID                holder identity (default <hostname>_<pid>)
  --log-level LEVEL            trace | debug | info | warn | error (default info)
  --workers N                  job controller workers, 1..64 (default 2)
  --write-concurrency N        pod creates one job controller step keeps in flight (a gang's
                               pods), 1..64 (default 8)
  --admission-write-concurrency N
                               status writes one admission cycle keeps in flight, 1..128
                               (default 32)
  --event-writers N            threads that write Events from a queue, off the controllers'
                               path (a full queue of 4096 drops them); 0 writes each Event
                               before going on, 0..64 (default 4)
  --admission-writes-first-ms N
                               while an admission cycle writes its statuses, job controller
                               workers and Event writers wait up to N ms before their own
                               requests, so admissions reach a busy API server first; 0 never
                               waits, 0..60000 (default 5000)
  --min-cycle-interval-ms N    shortest time between admission cycles (default 200)
  --sync-timeout-seconds N     give up (exit 1) if the informers have not synced by then
                               (default 300)
  --fair-sharing true|false    Kueue's fairSharing.enable: admit and preempt across a cohort by
                               weighted share (ClusterTrainingQueue spec.fairSharing.weight);
                               default false
  --allow-job-priority true|false
                               honour a TrainingJob's spec.priority, an integer any user who
                               may create TrainingJobs can set above every PriorityClass;
                               false (default): priorities come only from PriorityClasses, and
                               a waiting job that sets spec.priority is refused (Invalid)
  --template-dry-run true|false
                               admit a pending job only once a dry run of its rank-0 pod
                               (dryRun=All, fieldValidation=Strict) has passed, so a template
                               the API server refuses waits, named, instead of failing after
                               admission; one request per job and spec edit (default true)
  --not-ready-grace-seconds N  how long a node under an admitted gang may be NotReady before its
                               ranks move to other nodes (default 30)
  --pods-ready-timeout-seconds N
                               Kueue's waitForPodsReady: evict and requeue an admitted gang
                               that has not had every rank running for N s since its
                               admission or since it last stopped running; 0 (default) = off
  --requeuing-backoff-base-seconds N
                               the n-th requeue after such an eviction waits N * 2^(n-1) s
                               (default 60)
  --requeuing-backoff-max-seconds N
                               at most this long (default 3600)
  --requeuing-backoff-limit-count N
                               after N requeues the job is suspended instead (spec.suspend);
                               -1 (default) = no limit
  --http-read-timeout-seconds N
                               close a health-port connection whose request has not fully
                               arrived N s after the previous answer or the connect (default 60)
  --http-max-connections N     open health-port connections; one more is answered 503 and
                               closed (default 512)
  --http-max-connections-per-client N
                               of those, from one client address; one more is answered 503
                               and closed, so one client cannot fail the kubelet's probes
                               (default 32, 0 = no limit)
  --queue-status-pending-jobs N
                               each TrainingQueue's status.pendingJobs lists its first N
                               pending jobs in queue order with their positions, 0..100
                               (default 10, 0 = none)
  --version                    print the version and exit
  -h, --help                   print this help and exit

/readyz answers 200 once this replica leads and its informers have synced. The health port
takes GET and HEAD only (405 otherwise) and bodies up to 64 KiB (413 beyond).
SIGTERM or SIGINT: stop the controllers, release the Lease, exit 0.
)";
}

}  // namespace phalanx::operator_server
