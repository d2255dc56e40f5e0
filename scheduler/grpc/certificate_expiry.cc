#include "scheduler/grpc/certificate_expiry.h"

#include <ctime>
#include <memory>
#include <utility>
#include <vector>

#include "absl/time/civil_time.h"
#include "absl/time/clock.h"
#include "common/text_input.h"
#include "openssl/asn1.h"
#include "openssl/bio.h"
#include "openssl/pem.h"
#include "openssl/x509.h"

namespace phalanx::placement {

absl::StatusOr<int64_t> CertificateNotAfter(std::string_view pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(
      bio == nullptr ? nullptr : PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr),
      &X509_free);
  if (cert == nullptr) return absl::InvalidArgumentError("no PEM certificate that parses");
  std::tm tm{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert.get()), &tm) != 1) {
    return absl::InvalidArgumentError("the certificate's notAfter cannot be read");
  }
  const absl::CivilSecond civil(int64_t{tm.tm_year} + 1900, tm.tm_mon + 1, tm.tm_mday,
                                tm.tm_hour, tm.tm_min, tm.tm_sec);
  return absl::ToUnixSeconds(absl::FromCivil(civil, absl::UTCTimeZone()));
}

CertificateExpiry::CertificateExpiry(std::string path, std::string_view pem,
                                     absl::Duration reload, absl::Time now)
    : path_(std::move(path)), reload_(reload), read_at_(now) {
  absl::StatusOr<int64_t> not_after = CertificateNotAfter(pem);
  if (not_after.ok()) not_after_ = *not_after;
}

std::optional<int64_t> CertificateExpiry::NotAfter(absl::Time now) {
  absl::MutexLock lock(&mu_);
  if (now - read_at_ < reload_) return not_after_;
  read_at_ = now;
  absl::StatusOr<std::string> pem = ReadInputFile(path_, RealFiles(), kMaxPemBytes);
  if (!pem.ok()) return not_after_;
  absl::StatusOr<int64_t> not_after = CertificateNotAfter(*pem);
  if (not_after.ok()) not_after_ = *not_after;
  return not_after_;
}

void AddCertificateExpiryMetric(metrics::Registry& registry, std::string role,
                                const std::optional<TlsPem>& tls) {
  if (!tls || tls->cert.empty()) return;
  auto expiry = std::make_shared<CertificateExpiry>(
      tls->files.cert, tls->cert, absl::Seconds(tls->reload_seconds), absl::Now());
  registry.AddCallbackGaugeFamily(
      "phalanx_tls_certificate_expiry_timestamp_seconds",
      "Unix time at which the TLS certificate this process presents on the Placement API "
      "expires (its notAfter), read again from its file as often as gRPC reloads it.",
      {"role"}, [expiry, role = std::move(role)] {
        std::vector<metrics::LabelledValue> out;
        if (std::optional<int64_t> not_after = expiry->NotAfter(absl::Now())) {
          out.push_back({.labels = {role}, .value = static_cast<double>(*not_after)});
        }
        return out;
      });
}

}  // namespace phalanx::placement
