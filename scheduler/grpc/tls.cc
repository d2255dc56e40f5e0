#include "scheduler/grpc/tls.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/text_input.h"

namespace phalanx::placement {
namespace {

// No certificate bundle or key comes near this.
constexpr size_t kMaxPemBytes = size_t{1} << 20;

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

absl::StatusOr<std::optional<TlsPem>> ReadAll(const TlsFiles& files,
                                              const TlsOptionNames& names) {
  TlsPem pem;
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
  ::grpc::SslServerCredentialsOptions options(
      tls->ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                      : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = tls->ca;
  options.pem_key_cert_pairs.push_back({tls->key, tls->cert});
  return ::grpc::SslServerCredentials(options);
}

std::shared_ptr<::grpc::ChannelCredentials> ChannelCredentials(const std::optional<TlsPem>& tls) {
  if (!tls) return ::grpc::InsecureChannelCredentials();
  ::grpc::SslCredentialsOptions options;
  options.pem_root_certs = tls->ca;
  options.pem_private_key = tls->key;
  options.pem_cert_chain = tls->cert;
  return ::grpc::SslCredentials(options);
}

}  // namespace phalanx::placement
