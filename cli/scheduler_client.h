// How the CLI reaches phalanx-scheduler's Placement gRPC API: the TLS flags every command with
// --server takes (defaults from the environment, as --server's from $PHALANX_SCHEDULER_GRPC),
// and the client options made from them.
//
//   SchedulerTls tls = SchedulerTlsFromEnvironment();
//   AddSchedulerTlsFlags(flags, &tls);
//   ...
//   ASSIGN_OR_RETURN(placement::GrpcClientOptions options, SchedulerClientOptions(tls, deadline));
//   placement::GrpcPlacementService scheduler(server, options);
#pragma once

#include <chrono>
#include <string>

#include "absl/status/statusor.h"
#include "cli/flags.h"
#include "scheduler/grpc/placement_grpc_client.h"

namespace phalanx::cli {

struct SchedulerTls {
  std::string ca;           // --tls-ca, $PHALANX_SCHEDULER_TLS_CA
  std::string cert;         // --tls-cert, $PHALANX_SCHEDULER_TLS_CERT
  std::string key;          // --tls-key, $PHALANX_SCHEDULER_TLS_KEY
  std::string server_name;  // --tls-server-name, $PHALANX_SCHEDULER_TLS_SERVER_NAME
};

SchedulerTls SchedulerTlsFromEnvironment();
void AddSchedulerTlsFlags(FlagSet& flags, SchedulerTls* tls);

// Usage lines of the flags above, indented as the commands' own.
inline constexpr char kSchedulerTlsUsage[] =
    R"(  --tls-ca FILE         call the scheduler over TLS, trusting this PEM CA bundle
                        (default $PHALANX_SCHEDULER_TLS_CA; unset: plain text)
  --tls-cert FILE, --tls-key FILE
                        PEM client certificate and key, for a scheduler that requires one
                        (defaults $PHALANX_SCHEDULER_TLS_CERT, $PHALANX_SCHEDULER_TLS_KEY)
  --tls-server-name N   the name the scheduler's certificate carries, when it is not the
                        --server host (a port-forward);
                        default $PHALANX_SCHEDULER_TLS_SERVER_NAME)";

// Reads the files (scheduler/grpc/tls.h LoadClientTls); InvalidArgument names the flag.
absl::StatusOr<placement::GrpcClientOptions> SchedulerClientOptions(
    const SchedulerTls& tls, std::chrono::milliseconds deadline);

}  // namespace phalanx::cli
