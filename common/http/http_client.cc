#include "common/http/http_client.h"

#include <chrono>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "boost/asio/ip/tcp.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"
#include "common/http/internal/beast_common.h"
#include "common/status.h"

namespace phalanx::http {
namespace internal {
namespace {

absl::string_view View(std::string_view s) { return absl::string_view(s.data(), s.size()); }
beast::string_view BeastView(std::string_view s) { return beast::string_view(s.data(), s.size()); }

}  // namespace

// One keep-alive connection, reopened on demand. Synchronous calls with timeouts: each
// operation is started asynchronously on a private io_context and run to completion, because
// beast::tcp_stream enforces its expiry only on asynchronous operations.
class ClientConnection {
 public:
  ClientConnection(std::string host, int port, ClientOptions options)
      : host_(std::move(host)), port_(port), options_(options), stream_(ioc_) {
    buffer_.reserve(kReadBufferBytes);
  }
  ~ClientConnection() { Close(); }

  absl::StatusOr<Response> Send(std::string_view method, std::string_view target,
                                std::string_view body, std::string_view content_type) {
    bhttp::request<bhttp::span_body<const char>> request;
    bhttp::verb verb = bhttp::string_to_verb(BeastView(method));
    if (verb == bhttp::verb::unknown) {
      request.method_string(BeastView(method));
    } else {
      request.method(verb);
    }
    request.target(BeastView(target));
    request.version(11);
    request.set(bhttp::field::host, Where());
    request.set(bhttp::field::user_agent, "phalanx");
    if (!content_type.empty()) request.set(bhttp::field::content_type, BeastView(content_type));
    request.body() = beast::span<const char>(body.data(), body.size());
    request.keep_alive(true);
    request.prepare_payload();
    return Exchange(request);
  }

  void Close() {
    if (!connected_) return;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
    buffer_.clear();
    connected_ = false;
  }

  int connections_opened() const { return connections_opened_; }

 private:
  // Starts `start(handler)` and runs the io_context until it completes; returns its error.
  template <typename Start>
  beast::error_code Run(Start&& start) {
    beast::error_code result;
    stream_.expires_after(std::chrono::milliseconds(options_.timeout_ms));
    start([&result](beast::error_code ec, auto&&...) { result = ec; });
    ioc_.restart();
    ioc_.run();
    return result;
  }

  std::string Where() const { return absl::StrCat(host_, ":", port_); }

  absl::Status Connect() {
    if (!endpoints_) {
      beast::error_code ec;
      tcp::resolver resolver(ioc_);
      auto results = resolver.resolve(host_, std::to_string(port_), ec);
      if (ec) {
        return absl::UnavailableError(absl::StrCat("resolving ", Where(), ": ", ec.message()));
      }
      endpoints_ = std::move(results);
    }
    beast::error_code ec =
        Run([&](auto handler) { stream_.async_connect(*endpoints_, handler); });
    if (ec) {
      stream_.close();
      return Failure("connecting to", ec);
    }
    beast::error_code ignored;
    stream_.socket().set_option(tcp::no_delay(true), ignored);
    connected_ = true;
    ++connections_opened_;
    return absl::OkStatus();
  }

  absl::Status Failure(std::string_view what, beast::error_code ec) const {
    std::string message = absl::StrCat(View(what), " ", Where(), ": ", ec.message());
    if (ec == beast::error::timeout) {
      return absl::DeadlineExceededError(
          absl::StrCat(message, " (after ", options_.timeout_ms, " ms)"));
    }
    return absl::UnavailableError(message);
  }

  absl::StatusOr<Response> Exchange(bhttp::request<bhttp::span_body<const char>>& request) {
    for (int attempt = 0;; ++attempt) {
      const bool reused = connected_;
      if (!connected_) RETURN_IF_ERROR(Connect());
      // Only a request on a reused connection that got no answer at all is sent again (see
      // http_client.h); a timeout is never retried.
      auto retry = [&](beast::error_code ec, bool nothing_received) {
        return reused && attempt == 0 && nothing_received && ec != beast::error::timeout;
      };
      beast::error_code ec =
          Run([&](auto handler) { bhttp::async_write(stream_, request, handler); });
      if (ec) {
        Close();
        if (retry(ec, true)) continue;
        return Failure("sending a request to", ec);
      }
      bhttp::response_parser<bhttp::string_body> parser;
      parser.body_limit(options_.max_response_bytes);
      // A HEAD response carries the Content-Length of a body it does not send.
      parser.skip(request.method() == bhttp::verb::head);
      ec = Run([&](auto handler) { bhttp::async_read(stream_, buffer_, parser, handler); });
      if (ec) {
        Close();
        if (retry(ec, !parser.got_some())) continue;
        if (IsParseError(ec)) {
          return absl::InternalError(
              absl::StrCat("bad response from ", Where(), ": ", ec.message()));
        }
        return Failure("reading the response from", ec);
      }
      bhttp::response<bhttp::string_body> message = parser.release();
      if (!message.keep_alive()) Close();
      Response response;
      response.status = static_cast<int>(message.result_int());
      auto content_type = message[bhttp::field::content_type];
      response.content_type.assign(content_type.data(), content_type.size());
      response.body = std::move(message.body());
      return response;
    }
  }

  const std::string host_;
  const int port_;
  const ClientOptions options_;
  net::io_context ioc_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<tcp::resolver::results_type> endpoints_;
  bool connected_ = false;
  int connections_opened_ = 0;
};

}  // namespace internal

HttpClient::HttpClient(std::string host, int port, ClientOptions options)
    : connection_(std::make_unique<internal::ClientConnection>(std::move(host), port, options)) {}

HttpClient::~HttpClient() = default;

absl::StatusOr<Response> HttpClient::Get(std::string_view target) {
  return Send("GET", target, "", "");
}

absl::StatusOr<Response> HttpClient::Post(std::string_view target, std::string_view body,
                                          std::string_view content_type) {
  return Send("POST", target, body, content_type);
}

absl::StatusOr<Response> HttpClient::Send(std::string_view method, std::string_view target,
                                          std::string_view body, std::string_view content_type) {
  return connection_->Send(method, target, body, content_type);
}

void HttpClient::Close() { connection_->Close(); }

int HttpClient::connections_opened() const { return connection_->connections_opened(); }

}  // namespace phalanx::http
