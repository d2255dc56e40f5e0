// When the certificate a binary presents on the Placement API runs out, as the Prometheus gauge
// phalanx_tls_certificate_expiry_timestamp_seconds{role="server"|"client"} (Unix seconds of the
// leaf certificate's notAfter; docs/metrics.md). phalanx-scheduler reports its serving
// certificate, phalanx-operator its client certificate. gRPC reads the TLS files again every
// TlsPem::reload_seconds (tls.h), so a rotated Secret is served without a restart; the gauge
// reads the certificate file again on the same period, at the first scrape after it has passed,
// so it follows what is served, and an expiry alert (charts/phalanx/files/monitoring/alerts.yaml)
// resolves once cert-manager has rotated the certificate.
//
//   metrics::Registry registry;
//   ASSIGN_OR_RETURN(std::optional<TlsPem> tls, LoadServerTls(files, names));
//   AddCertificateExpiryMetric(registry, "server", tls);   // no series without a certificate
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/metrics/registry.h"
#include "scheduler/grpc/tls.h"

namespace phalanx::placement {

// The notAfter of the first certificate in `pem` (the leaf of a chain), in Unix seconds.
// InvalidArgument when `pem` holds no certificate that parses.
absl::StatusOr<int64_t> CertificateNotAfter(std::string_view pem);

// The notAfter of the certificate in one PEM file, read again at most every `reload`. A read
// that fails (the file being replaced, or not a certificate) keeps the last value: gRPC keeps
// serving the certificate it last loaded then. Thread-safe.
class CertificateExpiry {
 public:
  // `pem`: the file's contents as read at `now` (LoadServerTls / LoadClientTls checked them).
  CertificateExpiry(std::string path, std::string_view pem, absl::Duration reload,
                    absl::Time now);

  // The notAfter as of `now`; nullopt while no read of the file has parsed.
  std::optional<int64_t> NotAfter(absl::Time now);

 private:
  const std::string path_;
  const absl::Duration reload_;
  absl::Mutex mu_;
  absl::Time read_at_ ABSL_GUARDED_BY(mu_);
  std::optional<int64_t> not_after_ ABSL_GUARDED_BY(mu_);
};

// Registers phalanx_tls_certificate_expiry_timestamp_seconds with one series, {role=`role`},
// for the certificate `tls` presents: none for plain text (nullopt) or a client without a
// certificate of its own. Call once per registry.
void AddCertificateExpiryMetric(metrics::Registry& registry, std::string role,
                                const std::optional<TlsPem>& tls);

}  // namespace phalanx::placement
