#include "scheduler/server/scheduler_config.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status.h"
#include "scheduler/topology.h"

namespace phalanx::scheduler {
namespace {

// The options bound to `config`: flag name (dashed) and config-file key (camelCase) alike.
ConfigFlags Options(SchedulerConfig& config) {
  ConfigFlags flags("phalanx-scheduler");
  flags.String("kubeconfig", &config.kubeconfig)
      .String("context", &config.context)
      .Address("extenderAddress", &config.extender_address)
      .Address("grpcAddress", &config.grpc_address)
      .Address("healthAddress", &config.health_address)
      .Add("topologyPreset",
           [&config](const std::string& v) -> absl::Status {
             absl::StatusOr<placement::Topology> t = placement::Topology::Preset(v);
             if (!t.ok()) {
               return absl::InvalidArgumentError(
                   absl::StrCat("topologyPreset: unknown preset \"", v, "\" (known: ",
                                absl::StrJoin(placement::Topology::PresetNames(), ", "), ")"));
             }
             config.topology_preset = v;
             return absl::OkStatus();
           })
      .String("topology", &config.topology)
      .String("logLevel", &config.log_level)
      .Int("httpThreads", &config.http_threads, 1, 256)
      .Int("extenderMaxBodyBytes", &config.extender_max_body_bytes, 4096, 1 << 30)
      .Int("grpcMaxMessageBytes", &config.grpc_max_message_bytes, 4096, 1 << 30)
      .String("grpcTlsCert", &config.grpc_tls_cert)
      .String("grpcTlsKey", &config.grpc_tls_key)
      .String("grpcTlsClientCa", &config.grpc_tls_client_ca)
      .Add("grpcTlsWriters",
           [&config](const std::string& v) -> absl::Status {
             config.grpc_tls_writers.clear();
             for (absl::string_view name : absl::StrSplit(v, ',', absl::SkipWhitespace())) {
               config.grpc_tls_writers.emplace_back(absl::StripAsciiWhitespace(name));
             }
             return absl::OkStatus();
           })
      .Int("httpReadTimeoutSeconds", &config.http_read_timeout_seconds, 1, 3600)
      .Int("httpMaxConnections", &config.http_max_connections, 1, 65536)
      .Int("httpMaxConnectionsPerClient", &config.http_max_connections_per_client, 0, 65536)
      .Int("syncTimeoutSeconds", &config.sync_timeout_seconds, 1, 86400);
  return flags;
}

}  // namespace

absl::Status ApplyConfigFile(const std::string& path, SchedulerConfig& config) {
  return Options(config).ApplyFile(path);
}

absl::StatusOr<SchedulerConfig> ParseSchedulerFlags(const std::vector<std::string>& args) {
  SchedulerConfig config;
  ASSIGN_OR_RETURN(ConfigFlags::Parsed parsed, Options(config).Parse(args));
  config.show_help = parsed.help;
  config.show_version = parsed.version;
  return config;
}

std::string SchedulerUsage() {
  return R"(phalanx-scheduler: keeps a live snapshot of the cluster, owns every gang's reservation,
serves the phalanx.v1alpha1.Placement gRPC API to phalanx-operator and answers kube-scheduler's
extender webhook so that each gang pod is bound exactly where its gang was reserved.

Usage: phalanx-scheduler [flags]

Flags (each also a key of the --config file, written without dashes in camelCase):
  --config FILE               YAML file with any of the keys below; flags override it
  --kubeconfig PATH           kubeconfig to use; empty (default) = in-cluster service account
  --context NAME              kubeconfig context (default: current-context)
  --extender-address H:P      HTTP address of the extender webhook kube-scheduler calls
                              (default 127.0.0.1:8888; urlPrefix http://H:P/scheduler)
  --grpc-address H:P          address of the Placement gRPC service (default 127.0.0.1:9443)
  --health-address H:P        address of /healthz, /readyz and /metrics (default 127.0.0.1:8080)
  --topology-preset NAME      eks | eks-4layer | gb200 (default eks): node label keys of the
                              network hierarchy, coarsest first
  --topology NAME             read the levels from this phalanx.dev NetworkTopology object instead
  --log-level LEVEL           trace | debug | info | warn | error (default info)
  --http-threads N            extender HTTP worker threads; a bind holds one for its API call
                              (default 64, 1..256)
  --extender-max-body-bytes N largest extender request body; larger ones get 413 before any
                              decoding (default 8388608 = 8 MiB, 4096..1073741824)
  --grpc-max-message-bytes N  largest Placement gRPC request; larger ones fail with
                              RESOURCE_EXHAUSTED (default 67108864 = 64 MiB, 4096..1073741824)
  --grpc-tls-cert FILE        serve the Placement gRPC API over TLS with this PEM certificate
  --grpc-tls-key FILE         and its PEM private key (both or neither; default: plain text)
  --grpc-tls-client-ca FILE   require every client to present a certificate signed by a CA in
                              this PEM bundle (mutual TLS; needs the two above). The three files
                              are read again every 60 s: a rotated certificate needs no restart
  --grpc-tls-writers NAMES    comma-separated certificate names (subject common name or
                              alternative name) of the clients that may change reservations
                              (ReserveBatch, Release, Resize, ReplaceNodes): any other client
                              may only read (needs --grpc-tls-client-ca; default: every client)
  --http-read-timeout-seconds N
                              close an HTTP connection (extender and health) whose request has
                              not fully arrived N s after the previous answer or the connect,
                              or whose answer is not read within N s (default 60)
  --http-max-connections N    open connections per HTTP server; one more is answered 503 and
                              closed (default 512)
  --http-max-connections-per-client N
                              open health-port connections from one client address; one more
                              is answered 503 and closed, so one client cannot fail the
                              kubelet's probes (default 32, 0 = no limit)
  --sync-timeout-seconds N    give up (exit 1) if the informers have not synced by then
                              (default 300)
  --version                   print the version and exit
  -h, --help                  print this help and exit

Port 0 in an address picks a free port; the bound ports are logged at start.
/readyz answers 200 only after the first full sync and the rebuild of every reservation from
TrainingJob status.placement; the extender and gRPC servers start only then.
SIGTERM or SIGINT: stop serving, finish requests in flight, exit 0.
)";
}

}  // namespace phalanx::scheduler
