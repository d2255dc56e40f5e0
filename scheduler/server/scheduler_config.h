// phalanx-scheduler's configuration: defaults, then a YAML file (--config), then flags, each
// overriding the one before.
//
//   ASSIGN_OR_RETURN(SchedulerConfig config, ParseSchedulerFlags(argc, argv));
//   if (config.show_help) { std::cout << SchedulerUsage(); return 0; }
//
// Config file (every key optional; the names match the flags without "--"):
//
//   kubeconfig: /etc/phalanx/kubeconfig   # empty: in-cluster service account
//   context: ""
//   extenderAddress: 127.0.0.1:8888       # kube-scheduler's extender webhook (HTTP)
//   grpcAddress: 127.0.0.1:9443           # phalanx.v1alpha1.Placement (gRPC)
//   healthAddress: 127.0.0.1:8080         # /healthz, /readyz, /metrics
//   topologyPreset: eks                   # eks | eks-4layer | gb200
//   topology: ""                          # or the name of a phalanx.dev NetworkTopology object
//   logLevel: info
//   extenderMaxBodyBytes: 8388608         # larger extender requests get 413
//   grpcMaxMessageBytes: 67108864         # larger Placement requests get RESOURCE_EXHAUSTED
//   grpcTlsCert: /etc/phalanx/tls/tls.crt # Placement gRPC over TLS (empty: plain text)
//   grpcTlsKey: /etc/phalanx/tls/tls.key
//   grpcTlsClientCa: /etc/phalanx/tls/ca.crt  # clients must present a certificate it signed
//   httpReadTimeoutSeconds: 60            # a request not received by then: connection closed
//   httpMaxConnections: 512               # per HTTP server; one more gets 503
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/daemon/config_flags.h"

namespace phalanx::scheduler {

struct SchedulerConfig {
  std::string kubeconfig;  // "" = in-cluster
  std::string context;
  std::string extender_address = "127.0.0.1:8888";
  std::string grpc_address = "127.0.0.1:9443";
  std::string health_address = "127.0.0.1:8080";
  std::string topology_preset = "eks";
  std::string topology;  // NetworkTopology object name; wins over the preset when set
  std::string log_level = "info";
  // Extender worker threads. A bind holds its thread for the pods/binding round trip to the API
  // server (0.1-0.35 s on a loaded control plane), and kube-scheduler's filter calls, which its
  // one scheduling loop waits for, queue behind them: 2 threads capped a 10,000-pod run at
  // ~14 binds/s, and 16 capped one at ~70 binds/s with binds taking 0.23 s, while
  // kube-scheduler binds plain pods with no such cap (docs/benchmarks.md, end to end).
  int http_threads = 64;
  // Request limits of the serving endpoints (docs/extender.md "Limits", docs/placement-api.md).
  int extender_max_body_bytes = 8 << 20;
  int grpc_max_message_bytes = 64 << 20;  // placement::kDefaultMaxMessageBytes
  // TLS of the Placement gRPC service (PEM files; scheduler/grpc/tls.h): certificate and key,
  // and the CA client certificates must chain to (given: clients must present one).
  std::string grpc_tls_cert;
  std::string grpc_tls_key;
  std::string grpc_tls_client_ca;
  // Names (certificate common name or subject alternative name) of the clients that may change
  // reservations; empty: every client. Needs grpc_tls_client_ca (PlacementGrpcService::
  // RequireWriters).
  std::vector<std::string> grpc_tls_writers;
  int http_read_timeout_seconds = 60;
  int http_max_connections = 512;
  // Of those, on the health port, from one client address at most (0 = no limit).
  int http_max_connections_per_client = 32;
  // How long to wait for the first full sync of the informers before giving up (exit 1).
  int sync_timeout_seconds = 300;

  bool show_help = false;
  bool show_version = false;
};

// Applies a YAML config file's keys to `config`. Unknown keys are errors (a typo must not be
// ignored silently); messages name the file and the key.
absl::Status ApplyConfigFile(const std::string& path, SchedulerConfig& config);

// Parses argv (flags as --name=value or --name value). --config is applied first, whatever its
// position, so flags override the file.
absl::StatusOr<SchedulerConfig> ParseSchedulerFlags(const std::vector<std::string>& args);

std::string SchedulerUsage();

}  // namespace phalanx::scheduler
