// phalanx-scheduler: the long-running half of Phalanx's placement. It keeps a live
// ClusterSnapshot of the cluster (Node, Pod and TrainingJob informers), owns every gang's
// reservation, serves the phalanx.v1alpha1.Placement gRPC API to phalanx-operator and answers
// kube-scheduler's extender webhook so each gang pod is bound where its gang was reserved.
// `phalanx-scheduler --help` lists the flags; docs/scheduler.md describes how it runs.
//
// Start-up order matters for correctness: /healthz first (liveness), then the informers, then —
// only after every informer has synced and every reservation has been rebuilt from TrainingJob
// status.placement — the extender and gRPC servers and /readyz. A restarted scheduler therefore
// never answers a filter or a ReserveBatch from a snapshot that lacks a reservation.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/api_labels.h"
#include "common/daemon/daemon_main.h"
#include "common/daemon/signal_waiter.h"
#include "common/http/http_server.h"
#include "common/http/probe_server.h"
#include "common/logging.h"
#include "common/metrics/registry.h"
#include "common/status.h"
#include "kube/api/training_job.h"
#include "kube/config.h"
#include "kube/informer.h"
#include "kube/rest_client.h"
#include "kube/transport_cpprest.h"
#include "scheduler/extender/extender.h"
#include "scheduler/extender/kube_binder.h"
#include "scheduler/grpc/certificate_expiry.h"
#include "scheduler/grpc/placement_grpc_server.h"
#include "scheduler/in_process_placement_service.h"
#include "scheduler/server/live_snapshot.h"
#include "scheduler/server/scheduler_config.h"
#include "scheduler/server/serving.h"
#include "scheduler/server/snapshot_metrics.h"
#include "scheduler/server/topology_loader.h"
#include "scheduler/snapshot_summary.h"
#include "spdlog/spdlog.h"

#ifndef PHALANX_VERSION
#define PHALANX_VERSION "dev"
#endif

namespace phalanx::scheduler {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;

// Seconds since `start` as a double, for histograms.
double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int Run(const SchedulerConfig& config) {
  // The TLS files first: a wrong path fails at once, not after the informers have synced.
  absl::StatusOr<std::optional<placement::TlsPem>> grpc_tls = LoadGrpcTls(config);
  if (!grpc_tls.ok()) {
    spdlog::critical("{}", std::string(grpc_tls.status().message()));
    return kExitBadInput;
  }
  kube::Cancellation stop;
  SignalWaiter signals([&stop] { stop.Cancel(); });

  absl::StatusOr<std::unique_ptr<kube::Transport>> transport = kube::ConnectCpprest(
      config.kubeconfig, config.context, absl::StrCat("phalanx-scheduler/", PHALANX_VERSION));
  if (!transport.ok()) {
    spdlog::critical("{}", std::string(transport.status().message()));
    return kExitBadInput;
  }
  kube::RestClient client(**transport);
  absl::StatusOr<placement::Topology> topology =
      LoadTopology(client, config.topology, config.topology_preset);
  if (!topology.ok()) {
    spdlog::critical("topology: {}", topology.status());
    return kExitBadInput;
  }

  // --- metrics and health, first: liveness must answer while the informers sync -------------
  metrics::Registry registry;
  std::atomic<bool> ready{false};
  http::RejectionMetrics rejections(registry);
  placement::PlacementGrpcService::RpcObserver grpc_observer = GrpcMetrics(registry);
  auto& informer_events = registry.AddCounter(
      "phalanx_scheduler_informer_events_total",
      "Watch events applied to the snapshot, by resource.", {"resource"});

  placement::InProcessPlacementService service{placement::ClusterSnapshot(*topology)};
  LiveSnapshot live(service);
  auto snapshot_value = [&service](auto fn) {
    double value = 0;
    service.Read([&](const placement::ClusterSnapshot& s) { value = fn(s); });
    return value;
  };
  registry.AddCallbackGauge("phalanx_snapshot_nodes", "Live nodes in the scheduler's snapshot.",
                            [&] {
                              return snapshot_value([](const placement::ClusterSnapshot& s) {
                                double n = 0;
                                for (const auto& node : s.nodes()) n += node.removed ? 0 : 1;
                                return n;
                              });
                            });
  registry.AddCallbackGauge(
      "phalanx_snapshot_pods", "Bound pods counted as used capacity in the snapshot.", [&] {
        return snapshot_value(
            [](const placement::ClusterSnapshot& s) { return double(s.pod_count()); });
      });
  registry.AddCallbackGauge(
      "phalanx_reservations", "Gangs holding a reservation.", [&] {
        return snapshot_value([](const placement::ClusterSnapshot& s) {
          return double(s.ReservedJobs().size());
        });
      });
  registry.AddCallbackGauge("phalanx_reservations_restored",
                            "Reservations rebuilt from TrainingJob status.placement since start.",
                            [&] { return double(live.counters().restored); });
  registry.AddCallbackGauge(
      "phalanx_reservations_unrestored",
      "TrainingJobs whose status.placement could not be restored yet (a node is missing or full).",
      [&] { return double(live.UnrestoredJobs().size()); });
  registry.AddCallbackGauge(
      "phalanx_scheduler_topology_label_gap_nodes",
      "Live nodes that carry a topology label but lack a coarser level's (each logged once): "
      "their deeper labels are ignored.",
      [&] { return double(live.LabelGapNodes().size()); });
  AddSnapshotMetrics(registry, [&service] {
    placement::SnapshotSummary summary;
    service.Read([&](const placement::ClusterSnapshot& s) {
      summary = placement::Summarize(s, kSnapshotMetricsSummary);
    });
    return summary;
  });
  placement::AddCertificateExpiryMetric(registry, "server", *grpc_tls);
  registry.AddCallbackGauge("phalanx_scheduler_ready",
                            "1 once the snapshot is synced and reservations are rebuilt.",
                            [&] { return ready.load() ? 1.0 : 0.0; });

  auto health = http::NewProbeServer(HttpServerOptions(config, config.health_address, 1,
                                                       /*per_client=*/true),
                                     registry, rejections, [&] {
                                       return ready.load()
                                                  ? http::Response::Text(200, "ok\n")
                                                  : http::Response::Text(
                                                        503, "snapshot not synced yet\n");
                                     });
  if (absl::Status s = health->Start(); !s.ok()) {
    spdlog::critical("health server on {}: {}", config.health_address, s);
    return kExitFailure;
  }
  spdlog::info("health and metrics on {} (port {})", config.health_address, health->port());

  // --- informers -------------------------------------------------------------------------
  kube::Informer<kube::Node> nodes(client, kube::Nodes());
  // Only pods that hold capacity: bound and not finished. A pod that finishes leaves the
  // selector, and the watch reports it as deleted.
  kube::Informer<kube::Pod> pods(
      client, kube::Pods(),
      {.reflector = {.field_selector =
                         "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"}});
  kube::Informer<kube::RawObject> jobs(client, kube::TrainingJobs());
  auto& node_events = informer_events.WithLabels({"nodes"});
  auto& pod_events = informer_events.WithLabels({"pods"});
  auto& job_events = informer_events.WithLabels({"trainingjobs"});
  nodes.AddEventHandlers({
      .on_add = [&](const kube::Node& n) { node_events.Inc(); live.NodeChanged(n.meta.name, &n); },
      .on_update = [&](const kube::Node&, const kube::Node& n) {
        node_events.Inc();
        live.NodeChanged(n.meta.name, &n);
      },
      .on_delete = [&](const kube::Node& n) { node_events.Inc(); live.NodeChanged(n.meta.name, nullptr); },
  });
  pods.AddEventHandlers({
      .on_add = [&](const kube::Pod& p) { pod_events.Inc(); live.PodChanged(p.meta.Key(), &p); },
      .on_update = [&](const kube::Pod&, const kube::Pod& p) {
        pod_events.Inc();
        live.PodChanged(p.meta.Key(), &p);
      },
      .on_delete = [&](const kube::Pod& p) { pod_events.Inc(); live.PodChanged(p.meta.Key(), nullptr); },
  });
  jobs.AddEventHandlers({
      .on_add = [&](const kube::RawObject& j) { job_events.Inc(); live.JobChanged(j.meta.Key(), &j); },
      .on_update = [&](const kube::RawObject&, const kube::RawObject& j) {
        job_events.Inc();
        live.JobChanged(j.meta.Key(), &j);
      },
      .on_delete = [&](const kube::RawObject& j) { job_events.Inc(); live.JobChanged(j.meta.Key(), nullptr); },
  });
  std::vector<std::thread> informer_threads;
  informer_threads.emplace_back([&] { nodes.Run(&stop); });
  informer_threads.emplace_back([&] { pods.Run(&stop); });
  informer_threads.emplace_back([&] { jobs.Run(&stop); });
  auto shutdown_informers = [&] {
    stop.Cancel();
    for (std::thread& t : informer_threads) t.join();
  };

  const auto sync_start = std::chrono::steady_clock::now();
  // One deadline for the three informers, as --sync-timeout-seconds promises.
  const absl::Time sync_deadline = absl::Now() + absl::Seconds(config.sync_timeout_seconds);
  auto left = [&] { return std::max(absl::ZeroDuration(), sync_deadline - absl::Now()); };
  bool synced = nodes.WaitForSync(left(), &stop) && pods.WaitForSync(left(), &stop) &&
                jobs.WaitForSync(left(), &stop);
  if (!synced && stop.cancelled()) {
    spdlog::info("stopped by a signal before the informers synced");
    shutdown_informers();
    health->Stop();
    return kExitOk;
  }
  if (!synced) {
    const std::string problems =
        kube::JoinSyncProblems({nodes.SyncProblem(), pods.SyncProblem(), jobs.SyncProblem()});
    spdlog::critical("informers did not sync within {} s: {}: {}", config.sync_timeout_seconds,
                     problems, kube::SyncHint(problems));
    shutdown_informers();
    health->Stop();
    return kExitFailure;
  }
  live.Build(nodes.List(), jobs.List(), pods.List());
  spdlog::info("informers synced in {:.2f} s: {} nodes, {} bound pods, {} TrainingJobs",
               Since(sync_start), nodes.size(), pods.size(), jobs.size());
  for (const std::string& job : live.UnrestoredJobs()) {
    spdlog::warn("TrainingJob {}: status.placement could not be restored yet; its gang pods "
                 "stay pending until it can",
                 job);
  }

  // --- the two serving endpoints, only now ------------------------------------------------
  extender::KubeBinder binder(client);
  // A gang pod binds to its job's reservation only when the job is its controller (labels
  // alone would let any pod of the namespace take a rank's node: security audit S9).
  extender::ExtenderOptions extender_options;
  extender_options.job_uid = [&jobs](std::string_view job) -> std::optional<std::string> {
    std::shared_ptr<const kube::RawObject> object = jobs.Get(std::string(job));
    if (object == nullptr) return std::nullopt;
    return object->meta.uid;
  };
  extender::Extender extender(service, binder, extender_options);
  auto webhook = NewExtenderServer(config, extender, registry, rejections);
  if (absl::Status s = webhook->Start(); !s.ok()) {
    spdlog::critical("extender server on {}: {}", config.extender_address, s);
    shutdown_informers();
    health->Stop();
    return kExitFailure;
  }
  spdlog::info("extender webhook on {} (port {}), urlPrefix http://{}:{}/scheduler",
               config.extender_address, webhook->port(),
               ParseHostPort(config.extender_address, "")->host, webhook->port());

  placement::PlacementGrpcService grpc_service(
      service,
      [&service](const placement::SummaryOptions& options) {
        placement::SnapshotSummary summary;
        service.Read([&](const placement::ClusterSnapshot& s) {
          summary = placement::Summarize(s, options);
        });
        return summary;
      },
      std::move(grpc_observer));
  grpc_service.RequireWriters(config.grpc_tls_writers);
  absl::StatusOr<placement::RunningPlacementServer> grpc_server =
      StartGrpcServer(config, *grpc_tls, grpc_service);
  if (!grpc_server.ok()) {
    spdlog::critical("Placement gRPC server on {}: {}", config.grpc_address, grpc_server.status());
    webhook->Stop();
    shutdown_informers();
    health->Stop();
    return kExitFailure;
  }
  spdlog::info("Placement gRPC API on {} (port {}, {}{})", config.grpc_address, grpc_server->port,
               !grpc_tls->has_value()          ? "plain text"
               : (*grpc_tls)->ca.empty()       ? "TLS"
                                               : "mutual TLS: client certificates required",
               config.grpc_tls_writers.empty()
                   ? ""
                   : absl::StrCat("; reservations changed only by ",
                                  absl::StrJoin(config.grpc_tls_writers, ", ")));
  ready.store(true);
  spdlog::info("phalanx-scheduler {} ready", PHALANX_VERSION);

  while (!stop.WaitFor(absl::Hours(1))) {
  }
  spdlog::info("received {}: draining", signals.received_name());
  ready.store(false);
  webhook->Stop();
  grpc_server->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  shutdown_informers();
  health->Stop();
  spdlog::info("phalanx-scheduler stopped");
  return kExitOk;
}

}  // namespace
}  // namespace phalanx::scheduler

int main(int argc, char** argv) {
  using namespace phalanx::scheduler;
  kube::LoadDefaultCaFileOnce();  // before any thread
  return phalanx::DaemonMain<SchedulerConfig>("phalanx-scheduler", PHALANX_VERSION, argc, argv,
                                              ParseSchedulerFlags, SchedulerUsage, Run);
}
