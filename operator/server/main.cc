// phalanx-operator: admits TrainingJobs under ClusterQueue quotas against phalanx-scheduler's
// Placement service and runs each admitted job's pods through its lifecycle.
// `phalanx-operator --help` lists the flags; docs/operator.md describes how it runs.
//
// Start-up: /healthz at once; then the Lease (standbys wait here, serving /healthz); then, as
// leader, the informers; once every informer has synced, the controllers and /readyz. Losing
// the Lease stops the controllers and exits 1 so the replica restarts clean as a standby.
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/daemon/config_flags.h"
#include "common/daemon/daemon_main.h"
#include "common/daemon/signal_waiter.h"
#include "common/http/http_server.h"
#include "common/http/probe_server.h"
#include "common/logging.h"
#include "common/metrics/registry.h"
#include "kube/config.h"
#include "kube/event_recorder.h"
#include "kube/leader_election.h"
#include "kube/rest_client.h"
#include "kube/transport_cpprest.h"
#include "kube/write_gate.h"
#include "operator/server/admission_controller.h"
#include "operator/server/informers.h"
#include "operator/server/job_controller.h"
#include "operator/server/operator_config.h"
#include "operator/server/operator_metrics.h"
#include "scheduler/grpc/certificate_expiry.h"
#include "scheduler/grpc/placement_grpc_client.h"
#include "spdlog/spdlog.h"

#ifndef PHALANX_VERSION
#define PHALANX_VERSION "dev"
#endif

namespace phalanx::operator_server {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;

std::string DefaultIdentity() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return absl::StrCat(host[0] ? host : "phalanx-operator", "_", getpid());
}

int Run(const OperatorConfig& config) {
  // The TLS files first: a wrong path fails at once, before any API call.
  absl::StatusOr<std::optional<placement::TlsPem>> placement_tls = placement::LoadClientTls(
      {.cert = config.placement_tls_cert, .key = config.placement_tls_key,
       .ca = config.placement_tls_ca},
      {"--placement-tls-cert", "--placement-tls-key", "--placement-tls-ca"});
  if (!placement_tls.ok()) {
    spdlog::critical("{}", std::string(placement_tls.status().message()));
    return kExitBadInput;
  }
  kube::Cancellation stop;
  SignalWaiter signals([&stop] { stop.Cancel(); });

  absl::StatusOr<std::unique_ptr<kube::Transport>> transport = kube::ConnectCpprest(
      config.kubeconfig, config.context, absl::StrCat("phalanx-operator/", PHALANX_VERSION));
  if (!transport.ok()) {
    spdlog::critical("{}", std::string(transport.status().message()));
    return kExitBadInput;
  }
  kube::RestClient client(**transport);
  // What the controllers read and write with: with leader election, writes stop the moment this
  // replica no longer surely holds the Lease (kube/fenced_client.h), not when it exits.
  kube::LeaseFence fence;
  kube::FencedClient fenced(client, fence,
                            absl::StrCat(config.lease_namespace, "/", config.lease_name));
  kube::Client& controller_client =
      config.leader_elect ? static_cast<kube::Client&>(fenced) : client;
  const std::string identity = config.identity.empty() ? DefaultIdentity() : config.identity;

  metrics::Registry registry;
  OperatorMetrics metrics(registry);
  std::atomic<bool> leading{false};
  std::atomic<bool> ready{false};
  registry.AddCallbackGauge("phalanx_operator_leader", "1 while this replica holds the Lease.",
                            [&] { return leading.load() ? 1.0 : 0.0; });
  registry.AddCallbackGauge("phalanx_operator_ready",
                            "1 once this replica leads and its informers have synced.",
                            [&] { return ready.load() ? 1.0 : 0.0; });

  placement::AddCertificateExpiryMetric(registry, "client", *placement_tls);

  HostPort hp = *ParseHostPort(config.health_address, "healthAddress");
  http::RejectionMetrics rejections(registry);
  auto health = http::NewProbeServer(
      {.address = hp.host,
       .port = hp.port,
       .threads = 1,
       .idle_timeout_ms = config.http_read_timeout_seconds * 1000,
       .max_connections = config.http_max_connections,
       .max_connections_per_client = config.http_max_connections_per_client},
      registry, rejections, [&] {
        if (ready.load()) return http::Response::Text(200, "ok\n");
        return http::Response::Text(
            503, leading.load() ? "informers not synced yet\n" : "standby: not the leader\n");
      });
  if (absl::Status s = health->Start(); !s.ok()) {
    spdlog::critical("health server on {}: {}", config.health_address, s);
    return kExitFailure;
  }
  spdlog::info("phalanx-operator {} ({}): health and metrics on {} (port {})", PHALANX_VERSION,
               identity, config.health_address, health->port());

  placement::GrpcPlacementService placement(
      config.placement_address,
      {.deadline = std::chrono::milliseconds(config.placement_deadline_ms),
       .tls = *placement_tls,
       .tls_server_name = config.placement_tls_server_name});
  registry.AddCallbackGauge(
      "phalanx_placement_unanswered_since_timestamp_seconds",
      "Unix time since which no call to phalanx-scheduler's Placement service has been answered "
      "(unreachable, TLS handshake failing, or past its deadline); 0 while calls are answered.",
      [&] {
        std::optional<absl::Time> since = placement.UnansweredSince();
        return since ? static_cast<double>(absl::ToUnixMillis(*since)) / 1000 : 0.0;
      });
  kube::WriteGate admission_writes;
  const absl::Duration admission_first = absl::Milliseconds(config.admission_writes_first_ms);
  // What the job controller and the Event writers yield to; null (0 ms) = nobody yields.
  kube::WriteGate* const admission_gate =
      admission_first > absl::ZeroDuration() ? &admission_writes : nullptr;
  kube::EventRecorder events(client, {.component = "phalanx-operator",
                                      .host = identity,
                                      .async_writers = config.event_writers,
                                      .yield_to = admission_gate,
                                      .max_yield = admission_first});
  registry.AddCallbackGauge("phalanx_operator_event_queue_length",
                            "Events recorded and not yet written.",
                            [&] { return static_cast<double>(events.queued()); });
  registry.AddCallbackGauge("phalanx_operator_events_dropped",
                            "Events dropped since start because the event queue was full.",
                            [&] { return static_cast<double>(events.dropped()); });
  registry.AddCallbackGauge(
      "phalanx_operator_writes_deferred_for_admission",
      "Requests (job controller steps, Events) that waited for an admission cycle's status "
      "writes since start (--admission-writes-first-ms).",
      [&] { return static_cast<double>(admission_writes.deferrals()); });
  registry.AddCallbackGauge(
      "phalanx_operator_writes_deferred_for_admission_seconds",
      "Total time those requests waited, in seconds.",
      [&] { return absl::ToDoubleSeconds(admission_writes.deferred()); });

  // Everything the leader runs; returns once `lost` fires.
  int exit_code = kExitOk;
  auto lead = [&](const kube::Cancellation& lost) {
    leading.store(true);
    Informers informers(controller_client);
    AdmissionControllerOptions admission_options{
        .min_cycle_interval = absl::Milliseconds(config.min_cycle_interval_ms),
        .write_concurrency = config.admission_write_concurrency,
        .write_gate = admission_gate};
    admission_options.fair_sharing.enable = config.fair_sharing;
    admission_options.allow_job_priority = config.allow_job_priority;
    admission_options.queue_status_pending_jobs = config.queue_status_pending_jobs;
    admission_options.faults.not_ready_grace = absl::Seconds(config.not_ready_grace_seconds);
    admission_options.pods_ready = {
        .timeout_seconds = config.pods_ready_timeout_seconds,
        .backoff_base_seconds = config.requeuing_backoff_base_seconds,
        .backoff_max_seconds = config.requeuing_backoff_max_seconds,
        .backoff_limit_count = config.requeuing_backoff_limit_count};
    AdmissionController admission(controller_client, informers, placement, events, metrics,
                                  admission_options);
    JobController jobs(controller_client, informers, placement, events, metrics,
                       config.write_concurrency);
    jobs.YieldTo(admission_gate, admission_first);
    // A pending job is admitted only once a dry run of its pod has passed (template_checks.h);
    // each new verdict starts a cycle.
    if (config.template_dry_run) {
      informers.template_checks.Enable([&admission] { admission.Trigger(); });
    }
    admission.RegisterHandlers();
    jobs.RegisterHandlers();
    informers.Start(&lost);
    if (!informers.WaitForSync(absl::Seconds(config.sync_timeout_seconds), &lost)) {
      if (!lost.cancelled()) {
        const std::string problems = informers.SyncProblems();
        spdlog::critical("informers did not sync within {} s: {}: {}", config.sync_timeout_seconds,
                         problems, kube::SyncHint(problems));
        exit_code = kExitFailure;
        stop.Cancel();
      }
      while (!lost.WaitFor(absl::Hours(1))) {
      }
      informers.Join();
      leading.store(false);
      return;
    }
    spdlog::info("informers synced: {} TrainingJobs, {} ClusterTrainingQueues, {} TrainingQueues, "
                 "{} pods, {} nodes; Placement service at {} ({})",
                 informers.jobs.size(), informers.cluster_queues.size(),
                 informers.local_queues.size(), informers.pods.size(), informers.nodes.size(),
                 config.placement_address,
                 !placement_tls->has_value()      ? "plain text"
                 : (*placement_tls)->cert.empty() ? "TLS"
                                                  : "mutual TLS");
    std::thread admission_thread([&] { admission.Run(lost); });
    std::thread job_thread([&] { jobs.Run(lost, config.workers); });
    ready.store(true);
    spdlog::info("phalanx-operator ready");
    while (!lost.WaitFor(absl::Hours(1))) {
    }
    ready.store(false);
    admission_thread.join();
    job_thread.join();
    informers.Join();
    leading.store(false);
  };

  if (config.leader_elect) {
    kube::LeaderElector elector(
        client,
        {.lease_namespace = config.lease_namespace, .lease_name = config.lease_name,
         .identity = identity,
         .fence = &fence},
        {.on_started_leading = lead,
         .on_new_leader =
             [&identity](const std::string& holder) {
               if (holder != identity) spdlog::info("leader is {}", holder.empty() ? "(none)" : holder);
             }});
    spdlog::info("waiting for Lease {}/{}", config.lease_namespace, config.lease_name);
    elector.Run(&stop);
    if (!stop.cancelled()) {
      spdlog::error("lost Lease {}/{}: exiting so this replica restarts as a standby",
                    config.lease_namespace, config.lease_name);
      exit_code = kExitFailure;
    }
  } else {
    lead(stop);
  }
  if (stop.cancelled() && signals.received() != 0) {
    spdlog::info("received {}: stopped", signals.received_name());
  }
  if (!events.Flush(absl::Seconds(2))) spdlog::warn("stopping with Events not yet written");
  if (events.dropped() > 0) {
    spdlog::warn("{} Events were dropped because the event queue was full", events.dropped());
  }
  health->Stop();
  spdlog::info("phalanx-operator stopped");
  return exit_code;
}

}  // namespace
}  // namespace phalanx::operator_server

int main(int argc, char** argv) {
  using namespace phalanx::operator_server;
  kube::LoadDefaultCaFileOnce();  // before any thread
  return phalanx::DaemonMain<OperatorConfig>("phalanx-operator", PHALANX_VERSION, argc, argv,
                                             ParseOperatorFlags, OperatorUsage, Run);
}
