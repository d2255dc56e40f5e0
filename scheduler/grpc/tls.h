// TLS for the phalanx.v1alpha1.Placement gRPC API (docs/placement-api.md "Security"): the PEM
// files each side is given, read and checked once at start, and the gRPC credentials made from
// them. Certificates are not watched: a rotated certificate takes effect when the process
// restarts (the Helm chart restarts both Deployments when its TLS Secret changes).
//
//   ASSIGN_OR_RETURN(std::optional<TlsPem> tls,
//                    LoadServerTls({.cert = cert, .key = key, .ca = client_ca},
//                                  {"--grpc-tls-cert", "--grpc-tls-key", "--grpc-tls-client-ca"}));
//   StartPlacementServer(service, {.address = "0.0.0.0:9443", .tls = tls});
//
//   ASSIGN_OR_RETURN(std::optional<TlsPem> tls, LoadClientTls({...}, {...}));
//   GrpcPlacementService placement(target, {.tls = tls, .tls_server_name = service_dns_name});
//
// A server with a certificate and a client CA requires every client to present a certificate
// that chains to that CA (mutual TLS): the Placement API can release any reservation, so in a
// cluster only phalanx-operator (and whoever holds a client certificate) may call it.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"

namespace phalanx::placement {

// Paths of PEM files; empty = not given.
struct TlsFiles {
  std::string cert;  // the certificate chain this side presents
  std::string key;   // its private key
  std::string ca;    // CA certificates the other side's certificate must chain to
};

// The option names of TlsFiles' fields, for messages ("--grpc-tls-cert: ...").
struct TlsOptionNames {
  std::string cert;
  std::string key;
  std::string ca;
};

// The files' contents.
struct TlsPem {
  std::string cert;
  std::string key;
  std::string ca;
};

// Server side: nullopt when no file is given (plain text). Otherwise cert and key are both
// required; ca is optional and, when given, makes client certificates mandatory. Each file must
// be readable and hold the PEM block its role needs; errors name the option and the path.
absl::StatusOr<std::optional<TlsPem>> LoadServerTls(const TlsFiles& files,
                                                    const TlsOptionNames& names);

// Client side: nullopt when no file is given. Otherwise ca is required (the server's
// certificate is always verified); cert and key go together, for a server that asks for them.
absl::StatusOr<std::optional<TlsPem>> LoadClientTls(const TlsFiles& files,
                                                    const TlsOptionNames& names);

// Plain text for nullopt.
std::shared_ptr<::grpc::ServerCredentials> ServerCredentials(const std::optional<TlsPem>& tls);
std::shared_ptr<::grpc::ChannelCredentials> ChannelCredentials(const std::optional<TlsPem>& tls);

}  // namespace phalanx::placement
