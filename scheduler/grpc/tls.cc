#include "scheduler/grpc/tls.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/text_input.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"
#include "openssl/bio.h"
#include "openssl/pem.h"
#include "openssl/x509.h"

namespace phalanx::placement {
namespace {

// Reads `path` for option `name` and checks that it holds a PEM block of one of `kinds`
// ("CERTIFICATE"; "PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY").
absl::StatusOr<std::string> ReadPem(const std::string& path, const std::string& name,
                                    absl::string_view what,
                                    const std::vector<absl::string_view>& kinds) {
  absl::StatusOr<std::string> text = ReadInputFile(path, RealFiles(), kMaxPemBytes);
  if (!text.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", text.status().message()));
  }
  for (absl::string_view kind : kinds) {
    if (absl::StrContains(*text, absl::StrCat("-----BEGIN ", kind, "-----"))) return text;
  }
  return absl::InvalidArgumentError(absl::StrCat(name, ": ", Printable(path), ": no PEM ", what,
                                                 " (want a -----BEGIN ", kinds.front(),
                                                 "----- block)"));
}

// Whether the first certificate of pem.cert (the leaf) is the public half of pem.key. Checked
// at start, so that a wrong pair is an error naming the options rather than a server
// whose every handshake fails.
absl::Status KeyMatchesCertificate(const TlsPem& pem, const TlsOptionNames& names) {
  if (pem.cert.empty() || pem.key.empty()) return absl::OkStatus();
  auto bio = [](const std::string& text) {
    return std::unique_ptr<BIO, decltype(&BIO_free)>(
        BIO_new_mem_buf(text.data(), static_cast<int>(text.size())), &BIO_free);
  };
  auto cert_bio = bio(pem.cert);
  auto key_bio = bio(pem.key);
  std::unique_ptr<X509, decltype(&X509_free)> cert(
      PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr), &X509_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr), &EVP_PKEY_free);
  if (cert == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(names.cert, ": ", Printable(pem.files.cert),
                                                   ": the certificate cannot be parsed"));
  }
  if (key == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        names.key, ": ", Printable(pem.files.key),
        ": the private key cannot be parsed (encrypted keys are not supported)"));
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    return absl::InvalidArgumentError(absl::StrCat(names.key, ": ", Printable(pem.files.key),
                                                   ": does not match the certificate of ",
                                                   names.cert, " (", Printable(pem.files.cert),
                                                   ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<TlsPem>> ReadAll(const TlsFiles& files,
                                              const TlsOptionNames& names) {
  TlsPem pem;
  pem.files = files;
  const struct {
    const std::string& path;
    const std::string& name;
    absl::string_view what;
    std::vector<absl::string_view> kinds;
    std::string& out;
  } parts[] = {
      {files.cert, names.cert, "certificate", {"CERTIFICATE"}, pem.cert},
      {files.key, names.key, "private key", {"PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY"},
       pem.key},
      {files.ca, names.ca, "CA certificate", {"CERTIFICATE"}, pem.ca},
  };
  for (const auto& part : parts) {
    if (part.path.empty()) continue;
    absl::StatusOr<std::string> text = ReadPem(part.path, part.name, part.what, part.kinds);
    if (!text.ok()) return text.status();
    part.out = *std::move(text);
  }
  if (absl::Status s = KeyMatchesCertificate(pem, names); !s.ok()) return s;
  return pem;
}

absl::Status CertAndKeyTogether(const TlsFiles& files, const TlsOptionNames& names) {
  if (files.cert.empty() != files.key.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        names.cert, " and ", names.key, " go together: give both or neither (",
        files.cert.empty() ? names.key : names.cert, " given alone)"));
  }
  return absl::OkStatus();
}

// What both ends' credentials read their certificates from: the files, again every
// reload_seconds ("" for a file not given).
std::shared_ptr<::grpc::experimental::FileWatcherCertificateProvider> WatchFiles(
    const TlsPem& tls) {
  return std::make_shared<::grpc::experimental::FileWatcherCertificateProvider>(
      tls.files.key, tls.files.cert, tls.files.ca, tls.reload_seconds);
}

}  // namespace

absl::StatusOr<std::optional<TlsPem>> LoadServerTls(const TlsFiles& files,
                                                    const TlsOptionNames& names) {
  if (files.cert.empty() && files.key.empty() && files.ca.empty()) return std::nullopt;
  if (absl::Status s = CertAndKeyTogether(files, names); !s.ok()) return s;
  if (files.cert.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        names.ca, " needs ", names.cert, " and ", names.key,
        ": the server must present a certificate to ask for one"));
  }
  return ReadAll(files, names);
}

absl::StatusOr<std::optional<TlsPem>> LoadClientTls(const TlsFiles& files,
                                                    const TlsOptionNames& names) {
  if (files.cert.empty() && files.key.empty() && files.ca.empty()) return std::nullopt;
  if (absl::Status s = CertAndKeyTogether(files, names); !s.ok()) return s;
  if (files.ca.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        names.cert, " needs ", names.ca, ": the server's certificate is always verified"));
  }
  return ReadAll(files, names);
}

std::shared_ptr<::grpc::ServerCredentials> ServerCredentials(const std::optional<TlsPem>& tls) {
  if (!tls) return ::grpc::InsecureServerCredentials();
  ::grpc::experimental::TlsServerCredentialsOptions options(WatchFiles(*tls));
  options.watch_identity_key_cert_pairs();
  if (!tls->ca.empty()) {  // client certificates required
    options.watch_root_certs();
    options.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  }
  return ::grpc::experimental::TlsServerCredentials(options);
}

std::shared_ptr<::grpc::ChannelCredentials> ChannelCredentials(const std::optional<TlsPem>& tls) {
  if (!tls) return ::grpc::InsecureChannelCredentials();
  ::grpc::experimental::TlsChannelCredentialsOptions options;
  options.set_certificate_provider(WatchFiles(*tls));
  options.watch_root_certs();
  if (!tls->cert.empty()) options.watch_identity_key_cert_pairs();  // a client certificate
  options.set_verify_server_certs(true);
  return ::grpc::experimental::TlsCredentials(options);
}

}  // namespace phalanx::placement
