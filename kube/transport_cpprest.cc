// cpprestsdk's strings are std::string on Linux; keep its U() macros out of our namespace.
#define _TURN_OFF_PLATFORM_STRING
#include "kube/transport_cpprest.h"

#include "absl/strings/str_cat.h"

#include <cpprest/http_client.h>

#include <algorithm>
#include <boost/asio/ssl.hpp>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "common/status.h"
#include "kube/fault_transport.h"
#include "kube/internal/strings.h"

namespace kube {

namespace {

namespace http = web::http;

absl::Status ErrorFromException(const std::exception& e, std::string_view what) {
  if (const auto* he = dynamic_cast<const http::http_exception*>(&e)) {
    if (he->error_code() == std::errc::timed_out) {
      return absl::DeadlineExceededError(internal::Cat(what, ": timed out: ", e.what()));
    }
    if (he->error_code() == std::errc::operation_canceled) {
      return absl::CancelledError(internal::Cat(what, ": cancelled"));
    }
  }
  if (dynamic_cast<const pplx::task_canceled*>(&e) != nullptr) {
    return absl::CancelledError(internal::Cat(what, ": cancelled"));
  }
  return absl::UnavailableError(internal::Cat(what, ": ", e.what()));
}

// Certificates of OpenSSL's default CA file, parsed once (LoadDefaultCaFileOnce); never freed.
std::vector<X509*>& DefaultCaCerts() {
  static auto* const certs = new std::vector<X509*>();
  return *certs;
}

bool IsIdempotent(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "PUT" || method == "DELETE";
}

class CpprestTransport : public Transport {
 public:
  CpprestTransport(RestConfig config, CpprestTransportOptions options)
      : config_(std::move(config)), options_(options), client_(NewClient()) {}

  absl::StatusOr<HttpResponse> Send(const HttpRequest& request) override {
    std::string what = internal::Cat(request.method, " ", request.path);
    absl::Status first_error;
    for (int attempt = 0; attempt < 2; ++attempt) {
      // A cpprest request object can be sent only once: rebuild it for the retry.
      ASSIGN_OR_RETURN(http::http_request req, ToCpprest(request));
      std::shared_ptr<http::client::http_client> client = CurrentClient();
      try {
        http::http_response resp = client->request(req).get();
        HttpResponse out = FromCpprest(resp);
        out.body = resp.extract_utf8string(true).get();
        return out;
      } catch (const std::exception& e) {
        absl::Status status = ErrorFromException(e, what);
        // Pooled keep-alive connections the server has since closed (an API-server restart, an
        // idle timeout) fail on first use, and the pool may hold several. Drop the whole pool
        // and retry once on a fresh connection when the request cannot have been processed (its
        // body was never written) or is safe to repeat, as Go's net/http does for client-go.
        if (attempt == 0 && absl::IsUnavailable(status) &&
            (IsIdempotent(request.method) ||
             std::string_view(e.what()).find("Failed to write request") !=
                 std::string_view::npos)) {
          ResetClient(client);
          first_error = status;
          continue;
        }
        return status;
      }
    }
    return first_error;
  }

  absl::StatusOr<HttpResponse> Stream(const HttpRequest& request, const ChunkCallback& on_chunk,
                                      const Cancellation* cancel) override {
    ASSIGN_OR_RETURN(http::http_request req, ToCpprest(request));
    std::string what = internal::Cat(request.method, " ", request.path);
    // A client of its own: the long-lived connection stays out of the shared pool, and closing it
    // on cancel affects nothing else.
    http::client::http_client client(config_.server, MakeConfig(options_.stream_timeout));
    pplx::cancellation_token_source cts;
    int registration = -1;
    if (cancel != nullptr) registration = cancel->OnCancel([&cts] { cts.cancel(); });
    absl::StatusOr<HttpResponse> result = StreamWith(client, req, cts, on_chunk, cancel, what);
    if (cancel != nullptr) cancel->Unregister(registration);
    return result;
  }

  // Builds the TLS context once up front so bad PEM fails at construction, not per request.
  absl::Status ValidateTls() {
    try {
      boost::asio::ssl::context ctx(boost::asio::ssl::context::sslv23);
      ConfigureTls(ctx);
      return absl::OkStatus();
    } catch (const std::exception& e) {
      return absl::InvalidArgumentError(internal::Cat("TLS configuration: ", e.what()));
    }
  }

 private:
  std::shared_ptr<http::client::http_client> NewClient() const {
    return std::make_shared<http::client::http_client>(config_.server,
                                                       MakeConfig(options_.request_timeout));
  }
  std::shared_ptr<http::client::http_client> CurrentClient() {
    std::lock_guard<std::mutex> lock(client_mu_);
    return client_;
  }
  // Replaces `failed` (unless another thread already did) so later requests use new connections.
  void ResetClient(const std::shared_ptr<http::client::http_client>& failed) {
    std::lock_guard<std::mutex> lock(client_mu_);
    if (client_ == failed) client_ = NewClient();
  }

  absl::StatusOr<HttpResponse> StreamWith(http::client::http_client& client,
                                          http::http_request& req,
                                          pplx::cancellation_token_source& cts,
                                          const ChunkCallback& on_chunk, const Cancellation* cancel,
                                          const std::string& what) {
    try {
      http::http_response resp = client.request(req, cts.get_token()).get();
      HttpResponse out = FromCpprest(resp);
      if (out.status < 200 || out.status >= 300) {
        out.body = resp.extract_utf8string(true).get();
        return out;
      }
      auto buffer = resp.body().streambuf();
      std::vector<char> chunk(64 * 1024);
      while (true) {
        if (cancel != nullptr && cancel->cancelled()) return absl::CancelledError(what);
        // The body buffer only hands over a read once `count` bytes are there, so wait for one
        // byte (the server may be quiet for minutes), then take whatever else has arrived.
        size_t n = buffer.getn(reinterpret_cast<uint8_t*>(chunk.data()), 1).get();
        if (n == 0) break;  // the server ended the response
        size_t more = std::min(static_cast<size_t>(std::max<std::streamsize>(buffer.in_avail(), 0)),
                               chunk.size() - 1);
        if (more > 0) {
          n += buffer.getn(reinterpret_cast<uint8_t*>(chunk.data()) + 1, more).get();
        }
        if (!on_chunk(std::string_view(chunk.data(), n))) {
          cts.cancel();  // closes the connection rather than draining the rest
          break;
        }
      }
      if (cancel != nullptr && cancel->cancelled()) return absl::CancelledError(what);
      return out;
    } catch (const std::exception& e) {
      if (cancel != nullptr && cancel->cancelled()) return absl::CancelledError(what);
      return ErrorFromException(e, what);
    }
  }

  http::client::http_client_config MakeConfig(absl::Duration timeout) const {
    http::client::http_client_config cfg;
    cfg.set_timeout(std::chrono::milliseconds(absl::ToInt64Milliseconds(timeout)));
    cfg.set_validate_certificates(!config_.insecure_skip_tls_verify);
    cfg.set_ssl_context_callback([this](boost::asio::ssl::context& ctx) { ConfigureTls(ctx); });
    return cfg;
  }

  void ConfigureTls(boost::asio::ssl::context& ctx) const {
    // The default CA file, parsed once by LoadDefaultCaFileOnce (empty without it).
    X509_STORE* store = SSL_CTX_get_cert_store(ctx.native_handle());
    for (X509* cert : DefaultCaCerts()) X509_STORE_add_cert(store, cert);
    if (!config_.ca_pem.empty()) {
      ctx.add_certificate_authority(boost::asio::buffer(config_.ca_pem));
    }
    if (!config_.client_cert_pem.empty()) {
      ctx.use_certificate_chain(boost::asio::buffer(config_.client_cert_pem));
      ctx.use_private_key(boost::asio::buffer(config_.client_key_pem),
                          boost::asio::ssl::context::pem);
    }
  }

  absl::StatusOr<http::http_request> ToCpprest(const HttpRequest& request) const {
    http::http_request req(request.method);
    try {
      req.set_request_uri(web::uri(request.path));
    } catch (const std::exception& e) {
      return absl::InvalidArgumentError(
          internal::Cat("bad request path ", request.path, ": ", e.what()));
    }
    std::string content_type;
    for (const auto& [key, value] : request.headers) {
      if (absl::EqualsIgnoreCase(key, "Content-Type")) {
        content_type = value;
      } else {
        req.headers().add(key, value);
      }
    }
    req.headers().add("User-Agent", config_.user_agent);
    ASSIGN_OR_RETURN(std::string token, config_.BearerToken());
    if (!token.empty()) req.headers().add("Authorization", internal::Cat("Bearer ", token));
    if (!request.body.empty() || !content_type.empty()) {
      // As bytes, with the Content-Type set first: cpprest's set_body(std::string, type) reads
      // a streambuf<char> through a basic_istream<unsigned char>, a call through a pointer of
      // an unrelated type that UBSan's vptr check stops on (hack/sanitize.sh).
      req.headers().set_content_type(content_type.empty() ? "application/json" : content_type);
      req.set_body(std::vector<unsigned char>(request.body.begin(), request.body.end()));
    }
    return req;
  }

  static HttpResponse FromCpprest(const http::http_response& resp) {
    HttpResponse out;
    out.status = resp.status_code();
    for (const auto& [key, value] : resp.headers()) out.headers.emplace_back(key, value);
    return out;
  }

  const RestConfig config_;
  const CpprestTransportOptions options_;
  std::mutex client_mu_;
  // Shared by concurrent Send()s (cpprest clients are thread-safe); swapped out when its pooled
  // connections have gone stale.
  std::shared_ptr<http::client::http_client> client_;
};

}  // namespace

void LoadDefaultCaFileOnce() {
  static bool done = false;
  if (done) return;
  done = true;
  const char* env = std::getenv("SSL_CERT_FILE");
  const std::string path = env != nullptr ? env : X509_get_default_cert_file();
  std::vector<X509*>& certs = DefaultCaCerts();
  if (BIO* bio = BIO_new_file(path.c_str(), "r"); bio != nullptr) {
    while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) certs.push_back(cert);
    BIO_free(bio);
  }
  ERR_clear_error();  // the end of the file reads as an error; a missing file trusts nothing more
  setenv("SSL_CERT_FILE", "/dev/null", 1);
}

absl::StatusOr<std::unique_ptr<Transport>> NewCpprestTransport(
    const RestConfig& config, const CpprestTransportOptions& options) {
  if (config.server.rfind("https://", 0) != 0 && config.server.rfind("http://", 0) != 0) {
    return absl::InvalidArgumentError(
        internal::Cat("server must be an http(s) URL, got \"", config.server, "\""));
  }
  try {
    web::uri check(config.server);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(internal::Cat("bad server URL: ", e.what()));
  }
  auto transport = std::make_unique<CpprestTransport>(config, options);
  RETURN_IF_ERROR(transport->ValidateTls());
  return std::unique_ptr<Transport>(std::move(transport));
}

absl::StatusOr<std::unique_ptr<Transport>> ConnectCpprest(const std::string& kubeconfig,
                                                          const std::string& context,
                                                          const std::string& user_agent) {
  absl::StatusOr<RestConfig> rest =
      kubeconfig.empty() ? LoadInClusterConfig() : LoadKubeconfig(kubeconfig, context);
  if (!rest.ok()) {
    return absl::Status(rest.status().code(), absl::StrCat("cannot load Kubernetes credentials: ",
                                                           rest.status().message()));
  }
  rest->user_agent = user_agent;
  absl::StatusOr<std::unique_ptr<Transport>> transport = NewCpprestTransport(*rest);
  if (!transport.ok()) {
    return absl::Status(transport.status().code(), absl::StrCat("API server ", rest->server, ": ",
                                                                transport.status().message()));
  }
  // Fault injection for chaos runs (docs/chaos.md); the transport itself when not asked for.
  return WrapWithFaultsFromEnv(*std::move(transport));
}

}  // namespace kube
