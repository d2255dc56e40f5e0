#include "cli/scheduler_client.h"

#include <cstdlib>
#include <optional>
#include <utility>

#include "scheduler/grpc/tls.h"

namespace phalanx::cli {
namespace {

std::string Environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

}  // namespace

SchedulerTls SchedulerTlsFromEnvironment() {
  return {.ca = Environment("PHALANX_SCHEDULER_TLS_CA"),
          .cert = Environment("PHALANX_SCHEDULER_TLS_CERT"),
          .key = Environment("PHALANX_SCHEDULER_TLS_KEY"),
          .server_name = Environment("PHALANX_SCHEDULER_TLS_SERVER_NAME")};
}

void AddSchedulerTlsFlags(FlagSet& flags, SchedulerTls* tls) {
  flags.String({"--tls-ca"}, &tls->ca)
      .String({"--tls-cert"}, &tls->cert)
      .String({"--tls-key"}, &tls->key)
      .String({"--tls-server-name"}, &tls->server_name);
}

absl::StatusOr<placement::GrpcClientOptions> SchedulerClientOptions(
    const SchedulerTls& tls, std::chrono::milliseconds deadline) {
  absl::StatusOr<std::optional<placement::TlsPem>> pem = placement::LoadClientTls(
      {.cert = tls.cert, .key = tls.key, .ca = tls.ca}, {"--tls-cert", "--tls-key", "--tls-ca"});
  if (!pem.ok()) return pem.status();
  return placement::GrpcClientOptions{
      .deadline = deadline, .tls = *std::move(pem), .tls_server_name = tls.server_name};
}

}  // namespace phalanx::cli
