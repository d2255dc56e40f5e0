// TLS for the phalanx.v1alpha1.Placement gRPC API (docs/placement-api.md "Security"): the PEM
// files each side is given, read and checked at start, and the gRPC credentials made from them.
// The credentials watch the files: every `reload_seconds` gRPC reads them again, and new
// connections use what they hold then: a rotated Secret (e.g. cert-manager's) takes effect
// without a restart. Connections already open keep the certificates of their handshake. A key
// and certificate that do not match are refused at start; replaced later one file at a time
// (not how the kubelet updates a mounted Secret: it swaps all its files at once), new
// handshakes fail until both are in place.
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

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"

namespace phalanx::placement {

// The most a TLS file may hold; no certificate bundle or key comes near it.
inline constexpr size_t kMaxPemBytes = size_t{1} << 20;

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

// The files' contents as read at start (checked there), and the files the credentials watch.
struct TlsPem {
  std::string cert;
  std::string key;
  std::string ca;
  TlsFiles files;
  // How often the credentials read the files again. Kubernetes updates a mounted Secret within
  // about a minute of its change (the kubelet's sync period).
  unsigned int reload_seconds = 60;
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

// Plain text for nullopt; otherwise credentials that watch tls->files.
std::shared_ptr<::grpc::ServerCredentials> ServerCredentials(const std::optional<TlsPem>& tls);
std::shared_ptr<::grpc::ChannelCredentials> ChannelCredentials(const std::optional<TlsPem>& tls);

}  // namespace phalanx::placement
