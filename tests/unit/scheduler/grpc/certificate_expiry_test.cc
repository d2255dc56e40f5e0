// The TLS certificate-expiry gauge: the notAfter of certificates made here with OpenSSL (known
// dates, UTCTime and, past 2049, GeneralizedTime), the file read again once gRPC's reload
// period has passed and not before, the last good value kept while the file is being replaced,
// and the series as Prometheus scrapes it.
#include "scheduler/grpc/certificate_expiry.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "openssl/bio.h"
#include "openssl/evp.h"
#include "openssl/pem.h"
#include "openssl/x509.h"

namespace phalanx::placement {
namespace {

using ::phalanx::testing::StatusIs;
using ::testing::HasSubstr;

// A self-signed P-256 certificate valid from 2026-01-01 until `not_after` ("YYYYMMDDHHMMSSZ"),
// and its key, as PEM.
struct Pem {
  std::string cert;
  std::string key;
};
Pem SelfSigned(const std::string& not_after) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), &EVP_PKEY_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), &X509_free);
  EXPECT_TRUE(key != nullptr && cert != nullptr);
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  EXPECT_EQ(ASN1_TIME_set_string_X509(X509_getm_notBefore(cert.get()), "20260101000000Z"), 1);
  EXPECT_EQ(ASN1_TIME_set_string_X509(X509_getm_notAfter(cert.get()), not_after.c_str()), 1);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("phalanx-scheduler"), -1, -1,
                             0);
  X509_set_issuer_name(cert.get(), name);
  X509_set_pubkey(cert.get(), key.get());
  EXPECT_GT(X509_sign(cert.get(), key.get(), EVP_sha256()), 0);
  auto text = [](auto write) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
    EXPECT_EQ(write(bio.get()), 1);
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<size_t>(size));
  };
  return {.cert = text([&](BIO* b) { return PEM_write_bio_X509(b, cert.get()); }),
          .key = text([&](BIO* b) {
            return PEM_write_bio_PrivateKey(b, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
          })};
}

// 2031-02-15T12:30:00Z, 2099-12-31T23:59:59Z and 2032-06-01T00:00:00Z in Unix seconds.
constexpr int64_t k2031 = 1928925000;
constexpr int64_t k2099 = 4102444799;
constexpr int64_t k2032 = 1969660800;

// CertificateNotAfter's value; -1 (and a failure) for an error.
int64_t NotAfter(const std::string& pem) {
  absl::StatusOr<int64_t> not_after = CertificateNotAfter(pem);
  EXPECT_TRUE(not_after.ok()) << not_after.status();
  return not_after.value_or(-1);
}

TEST(CertificateNotAfter, TheLeafsNotAfterInUnixSeconds) {
  EXPECT_EQ(NotAfter(SelfSigned("20310215123000Z").cert), k2031);
  // Past 2049 a certificate's dates are GeneralizedTime; past 2038 they overflow 32 bits.
  EXPECT_EQ(NotAfter(SelfSigned("20991231235959Z").cert), k2099);
  // A chain: the first certificate is the one presented.
  EXPECT_EQ(NotAfter(SelfSigned("20320601000000Z").cert + SelfSigned("20991231235959Z").cert),
            k2032);
  EXPECT_THAT(CertificateNotAfter(SelfSigned("20310215123000Z").key),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(CertificateNotAfter("-----BEGIN CERTIFICATE-----\nnot base64\n"),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

class CertificateFile : public ::testing::Test {
 protected:
  void Write(const std::string& text) {
    // As the kubelet updates a mounted Secret: the new file replaces the old one at once.
    std::ofstream(path_.string() + ".new") << text;
    std::filesystem::rename(path_.string() + ".new", path_);
  }
  std::filesystem::path dir_ = std::filesystem::path(::testing::TempDir()) /
                               absl::StrCat("certificate_expiry_", getpid());
  std::filesystem::path path_ = (std::filesystem::create_directories(dir_), dir_ / "tls.crt");
  const absl::Time start_ = absl::FromUnixSeconds(1800000000);
  ~CertificateFile() override { std::filesystem::remove_all(dir_); }
};

TEST_F(CertificateFile, ReadAgainOncePerReloadPeriodKeepingTheLastGoodValue) {
  const std::string first = SelfSigned("20310215123000Z").cert;
  Write(first);
  CertificateExpiry expiry(path_.string(), first, absl::Seconds(60), start_);
  EXPECT_EQ(expiry.NotAfter(start_), k2031);
  Write(SelfSigned("20320601000000Z").cert);  // rotated
  // gRPC has not read the new file yet either: the gauge says what is served.
  EXPECT_EQ(expiry.NotAfter(start_ + absl::Seconds(59)), k2031);
  EXPECT_EQ(expiry.NotAfter(start_ + absl::Seconds(60)), k2032);
  Write("half a file");  // being replaced, or broken: the last certificate is still served
  EXPECT_EQ(expiry.NotAfter(start_ + absl::Seconds(120)), k2032);
  std::filesystem::remove(path_);
  EXPECT_EQ(expiry.NotAfter(start_ + absl::Seconds(180)), k2032);
}

TEST(CertificateExpiry, NoValueUntilACertificateParses) {
  CertificateExpiry expiry("/nonexistent/tls.crt", "no certificate", absl::Seconds(60),
                           absl::FromUnixSeconds(0));
  EXPECT_EQ(expiry.NotAfter(absl::FromUnixSeconds(600)), std::nullopt);
}

TEST_F(CertificateFile, TheGaugeHasOneSeriesForTheRole) {
  const Pem pem = SelfSigned("20310215123000Z");
  Write(pem.cert);
  std::ofstream(dir_ / "tls.key") << pem.key;
  std::ofstream(dir_ / "ca.crt") << pem.cert;
  ASSERT_OK_AND_ASSIGN(
      std::optional<TlsPem> tls,
      LoadServerTls({.cert = path_.string(), .key = (dir_ / "tls.key").string(),
                     .ca = (dir_ / "ca.crt").string()},
                    {"--grpc-tls-cert", "--grpc-tls-key", "--grpc-tls-client-ca"}));
  metrics::Registry registry;
  AddCertificateExpiryMetric(registry, "server", tls);
  const std::string text = registry.Render();
  EXPECT_THAT(text,
              HasSubstr("# TYPE phalanx_tls_certificate_expiry_timestamp_seconds gauge\n"));
  EXPECT_THAT(text, HasSubstr("phalanx_tls_certificate_expiry_timestamp_seconds{role=\"server\"} "
                              "1928925000\n"));

  // Plain text, and a client that presents no certificate: no series, no family.
  metrics::Registry plain;
  AddCertificateExpiryMetric(plain, "client", std::nullopt);
  TlsPem ca_only = *tls;
  ca_only.cert.clear();
  AddCertificateExpiryMetric(plain, "client", ca_only);
  EXPECT_THAT(plain.Render(), ::testing::Not(HasSubstr("phalanx_tls_certificate")));
}

}  // namespace
}  // namespace phalanx::placement
