#include "common/http/http_server_beast.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "boost/asio/dispatch.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/post.hpp"
#include "boost/asio/steady_timer.hpp"
#include "boost/asio/strand.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"
#include "common/http/internal/beast_common.h"
#include "common/status.h"
#include "spdlog/spdlog.h"

namespace phalanx::http {
namespace internal {
namespace {

using Clock = std::chrono::steady_clock;

// How long a connection closed after an error response keeps reading (and discarding) what the
// client still sends, so that a client busy writing a rejected body reads our status line
// instead of a connection reset.
constexpr std::chrono::milliseconds kLingerTime{2000};
// How long Stop() lets a client finish sending a request it has started.
constexpr std::chrono::milliseconds kStopGrace{5000};
// Back-off before accepting again after accept() failed (e.g. out of file descriptors).
constexpr std::chrono::milliseconds kAcceptRetry{100};

std::string ToString(beast::string_view s) { return std::string(s.data(), s.size()); }

class BeastServer;

// One client connection. Every member runs on the connection's strand, so they never race
// with each other; the server reaches in only through Shutdown(), posted to that strand.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, BeastServer* server);
  ~Session();

  void Run();
  // Answers 503 and closes: the server already has max_connections open, in all or (when
  // `per_client`) from this client.
  void RunRejected(bool per_client);
  // The client's address, read once at Run; "" if the socket no longer has a peer.
  const std::string& peer() const { return peer_; }
  // Called from any thread when the server stops: runs Shutdown() on the connection's strand.
  void PostShutdown();

 private:
  enum class State { kReading, kWriting, kLingering, kClosed };

  // Closes the connection now if no request is under way, otherwise lets that request finish.
  void Shutdown();

  void ReadHeader();
  void OnHeader(beast::error_code ec, size_t bytes);
  void OnContinueWritten(beast::error_code ec, size_t bytes);
  void ReadBody();
  void OnRequest(beast::error_code ec, size_t bytes);
  // Reading failed: answer with an error status (and close), or just close.
  void OnReadError(beast::error_code ec);
  void Respond(Response response, bool keep_alive, bool head);
  // Answers an error status the server decided itself, then closes.
  void Refuse(Rejection rejection, int status, std::string body);
  void OnWritten(bool keep_alive, beast::error_code ec, size_t bytes);
  // Stops sending and reads (and drops) what the client still sends, until it closes or
  // linger_until_.
  void Linger();
  void Discard();
  void OnDiscarded(beast::error_code ec, size_t bytes);
  void Close();

  beast::tcp_stream stream_;
  BeastServer* const server_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  bhttp::response<bhttp::empty_body> continue_;
  std::optional<bhttp::response<bhttp::string_body>> response_;
  std::optional<net::steady_timer> stop_timer_;
  Clock::time_point linger_until_;
  State state_ = State::kReading;
  bool over_limit_ = false;  // answered 503 without reading: drain what the client sends
  std::string peer_;
};

class BeastServer final : public HttpServer {
 public:
  explicit BeastServer(ServerOptions options)
      : options_(std::move(options)), ioc_(std::max(1, options_.threads)) {}
  ~BeastServer() override { Stop(); }

  void Handle(std::string path, Handler handler) override;
  absl::Status Start() override;
  int port() const override { return port_.load(); }
  void Stop() override;

  // For sessions.
  const ServerOptions& options() const { return options_; }
  bool stopping() const { return stopping_.load(std::memory_order_acquire); }
  void Rejected(Rejection rejection) const {
    if (options_.on_rejected) options_.on_rejected(rejection);
  }
  Response Dispatch(const Request& request) const;
  // Why a connection is refused at Register.
  enum class Room { kYes, kFull, kClientFull };
  // Registers `session`; not kYes if max_connections were already open, in all or from its
  // client (it is registered anyway, so that Stop() reaches it while it answers 503).
  Room Register(const std::shared_ptr<Session>& session);
  void Unregister(const Session* session);

 private:
  void Accept();
  void OnAccept(beast::error_code ec, tcp::socket socket);
  const Handler* Route(const std::string& path) const;

  const ServerOptions options_;
  // Written only before Start(); read concurrently by the workers afterwards.
  std::map<std::string, Handler> routes_;
  std::vector<const std::pair<const std::string, Handler>*> prefixes_;  // longest first

  std::mutex lifecycle_mu_;  // serializes Start and Stop
  bool started_ = false;
  std::atomic<bool> stopping_{false};
  std::atomic<int> port_{0};

  // Declared before ioc_: sessions destroyed along with the io_context's pending handlers
  // unregister themselves here.
  std::mutex sessions_mu_;
  std::unordered_map<const Session*, std::weak_ptr<Session>> sessions_;
  std::unordered_map<std::string, int> per_client_;  // open connections by client address

  net::io_context ioc_;
  std::optional<tcp::acceptor> acceptor_;
  std::optional<net::steady_timer> accept_retry_;
  std::vector<std::thread> threads_;
};

// ---- Session ----

Session::Session(tcp::socket socket, BeastServer* server)
    : stream_(std::move(socket)), server_(server) {
  buffer_.reserve(kReadBufferBytes);
}

Session::~Session() { server_->Unregister(this); }

void Session::Run() {
  beast::error_code ec;
  const tcp::endpoint remote = stream_.socket().remote_endpoint(ec);
  if (!ec) peer_ = remote.address().to_string();
  if (const BeastServer::Room room = server_->Register(shared_from_this());
      room != BeastServer::Room::kYes) {
    return net::dispatch(stream_.get_executor(),
                         beast::bind_front_handler(&Session::RunRejected, shared_from_this(),
                                                   room == BeastServer::Room::kClientFull));
  }
  net::dispatch(stream_.get_executor(),
                beast::bind_front_handler(&Session::ReadHeader, shared_from_this()));
}

void Session::RunRejected(bool per_client) {
  if (server_->stopping()) return Close();
  over_limit_ = true;
  Refuse(Rejection::kTooManyConnections, 503,
         per_client ? absl::StrCat("too many connections from ", peer_, " (limit ",
                                   server_->options().max_connections_per_client,
                                   " per client); retry later\n")
                    : absl::StrCat("too many connections (limit ",
                                   server_->options().max_connections, "); retry later\n"));
}

void Session::PostShutdown() {
  net::post(stream_.get_executor(),
            beast::bind_front_handler(&Session::Shutdown, shared_from_this()));
}

void Session::Shutdown() {
  if (state_ == State::kClosed) return;
  if (state_ == State::kLingering) return Close();
  if (state_ == State::kReading) {
    bool request_started = parser_ && (parser_->got_some() || buffer_.size() > 0);
    if (!request_started) return Close();  // pending read ends with operation_aborted
    // The client is sending a request: give it a bounded time to finish.
    auto grace = std::min<std::chrono::milliseconds>(
        kStopGrace, std::chrono::milliseconds(server_->options().idle_timeout_ms));
    stop_timer_.emplace(stream_.get_executor(), grace);
    stop_timer_->async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec && self->state_ == State::kReading) self->Close();
    });
  }
  // kWriting: OnWritten sees stopping() and closes after this response.
}

void Session::ReadHeader() {
  if (server_->stopping()) return Close();
  state_ = State::kReading;
  parser_.emplace();
  parser_->body_limit(server_->options().max_body_bytes);
  stream_.expires_after(std::chrono::milliseconds(server_->options().idle_timeout_ms));
  bhttp::async_read_header(stream_, buffer_, *parser_,
                           beast::bind_front_handler(&Session::OnHeader, shared_from_this()));
}

void Session::OnHeader(beast::error_code ec, size_t) {
  if (ec) return OnReadError(ec);
  if (parser_->is_done()) return OnRequest({}, 0);  // no body
  auto expect = parser_->get()[bhttp::field::expect];
  if (beast::iequals(expect, "100-continue")) {
    // The client waits for this before sending the body (curl does for bodies over 1 KiB).
    continue_ = bhttp::response<bhttp::empty_body>(bhttp::status::continue_,
                                                   parser_->get().version());
    state_ = State::kWriting;
    return bhttp::async_write(
        stream_, continue_,
        beast::bind_front_handler(&Session::OnContinueWritten, shared_from_this()));
  }
  ReadBody();
}

void Session::OnContinueWritten(beast::error_code ec, size_t) {
  if (ec) return Close();
  state_ = State::kReading;
  ReadBody();
}

void Session::ReadBody() {
  bhttp::async_read(stream_, buffer_, *parser_,
                    beast::bind_front_handler(&Session::OnRequest, shared_from_this()));
}

void Session::OnRequest(beast::error_code ec, size_t) {
  if (ec) return OnReadError(ec);
  bhttp::request<bhttp::string_body> message = parser_->release();
  parser_.reset();
  Request request;
  request.method = ToString(message.method_string());
  beast::string_view target = message.target();
  size_t question = target.find('?');
  request.path = ToString(target.substr(0, question));
  if (question != beast::string_view::npos) request.query = ToString(target.substr(question + 1));
  request.content_type = ToString(message[bhttp::field::content_type]);
  request.body = std::move(message.body());

  Response response = server_->Dispatch(request);
  bool keep_alive = message.keep_alive() && !server_->stopping();
  Respond(std::move(response), keep_alive, message.method() == bhttp::verb::head);
}

void Session::Refuse(Rejection rejection, int status, std::string body) {
  server_->Rejected(rejection);
  Respond(Response::Text(status, std::move(body)), false, false);
}

void Session::OnReadError(beast::error_code ec) {
  if (ec == net::error::operation_aborted) return;  // Shutdown() closed the socket
  if (ec == beast::error::timeout && parser_ && (parser_->got_some() || buffer_.size() > 0)) {
    // A request begun and not finished in time (a stalled or very slow client).
    SPDLOG_DEBUG("http: closing a connection whose request did not arrive in time");
    server_->Rejected(Rejection::kTimeout);
    return Close();
  }
  if (ec == bhttp::error::end_of_stream || ec == beast::error::timeout ||
      ec == bhttp::error::partial_message) {
    // The client went away or went quiet; there is nobody to answer.
    SPDLOG_DEBUG("http: closing connection: {}", ec.message());
    return Close();
  }
  if (ec == bhttp::error::body_limit) {
    return Refuse(Rejection::kBodyTooLarge, 413,
                  absl::StrCat("request body larger than ", server_->options().max_body_bytes,
                               " bytes\n"));
  }
  if (ec == bhttp::error::header_limit) {
    return Refuse(Rejection::kHeaderTooLarge, 431, "request header fields too large\n");
  }
  if (IsParseError(ec)) {
    return Refuse(Rejection::kMalformed, 400, absl::StrCat("bad request: ", ec.message(), "\n"));
  }
  SPDLOG_DEBUG("http: connection error: {}", ec.message());
  Close();  // reset by peer and the like
}

void Session::Respond(Response answer, bool keep_alive, bool head) {
  if (answer.status < 100 || answer.status > 599) {
    spdlog::error("http: handler answered with status {}; sending 500", answer.status);
    answer = Response::Text(500, "internal error: invalid status\n");
  }
  response_.emplace();
  bhttp::response<bhttp::string_body>& response = *response_;
  response.result(static_cast<unsigned>(answer.status));
  response.version(11);
  response.set(bhttp::field::server, "phalanx");
  if (!answer.content_type.empty()) response.set(bhttp::field::content_type, answer.content_type);
  for (const auto& [name, value] : answer.headers) {
    // A handler's header must not break the framing: no CR/LF, no framing fields of its own.
    if (name.empty() || name.find_first_of(":\r\n") != std::string::npos ||
        value.find_first_of("\r\n") != std::string::npos ||
        beast::iequals(name, "Content-Length") || beast::iequals(name, "Transfer-Encoding") ||
        beast::iequals(name, "Connection")) {
      spdlog::error("http: dropping the handler's header field \"{}\"", name);
      continue;
    }
    response.set(name, value);
  }
  response.keep_alive(keep_alive);
  size_t length = answer.body.size();
  if (!head) response.body() = std::move(answer.body);
  response.content_length(length);  // a HEAD answer states the length it did not send

  state_ = State::kWriting;
  stream_.expires_after(std::chrono::milliseconds(server_->options().idle_timeout_ms));
  bhttp::async_write(stream_, response,
                     beast::bind_front_handler(&Session::OnWritten, shared_from_this(),
                                               keep_alive));
}

void Session::OnWritten(bool keep_alive, beast::error_code ec, size_t) {
  response_.reset();
  if (ec) {
    SPDLOG_DEBUG("http: writing a response failed: {}", ec.message());
    return Close();
  }
  if (keep_alive && !server_->stopping()) return ReadHeader();
  // A request answered without its body (or part of it) being read leaves bytes in flight:
  // drain them instead of resetting the connection under the client.
  if (parser_ || buffer_.size() > 0 || over_limit_) return Linger();
  Close();
}

void Session::Linger() {
  if (server_->stopping()) return Close();
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  state_ = State::kLingering;
  linger_until_ = Clock::now() + std::min<std::chrono::milliseconds>(
                                     kLingerTime, std::chrono::milliseconds(
                                                      server_->options().idle_timeout_ms));
  buffer_.consume(buffer_.size());
  Discard();
}

void Session::Discard() {
  stream_.expires_at(linger_until_);
  stream_.async_read_some(buffer_.prepare(kReadBufferBytes),
                          beast::bind_front_handler(&Session::OnDiscarded, shared_from_this()));
}

void Session::OnDiscarded(beast::error_code ec, size_t) {
  if (ec) return Close();  // EOF, timeout or aborted: done either way
  Discard();
}

void Session::Close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  if (stop_timer_) stop_timer_->cancel();
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.close();
}

// ---- BeastServer ----

void BeastServer::Handle(std::string path, Handler handler) {
  std::lock_guard<std::mutex> lock(lifecycle_mu_);
  if (started_) {
    spdlog::error("http: Handle(\"{}\") after Start() is ignored; register handlers first", path);
    return;
  }
  if (path.empty() || path[0] != '/') {
    spdlog::error("http: Handle(\"{}\"): a route must start with '/'; ignored", path);
    return;
  }
  routes_[std::move(path)] = std::move(handler);
}

const Handler* BeastServer::Route(const std::string& path) const {
  if (auto it = routes_.find(path); it != routes_.end()) return &it->second;
  for (const auto* prefix : prefixes_) {
    if (path.compare(0, prefix->first.size(), prefix->first) == 0) return &prefix->second;
  }
  return nullptr;
}

Response BeastServer::Dispatch(const Request& request) const {
  const Handler* handler = Route(request.path);
  if (handler == nullptr) {
    return Response::Text(404, absl::StrCat("no route for ", request.path, "\n"));
  }
  try {
    return (*handler)(request);
  } catch (const std::exception& e) {
    spdlog::error("http: handler for {} {} threw: {}", request.method, request.path, e.what());
  } catch (...) {
    spdlog::error("http: handler for {} {} threw a non-exception", request.method, request.path);
  }
  return Response::Text(500, "internal error\n");
}

BeastServer::Room BeastServer::Register(const std::shared_ptr<Session>& session) {
  std::lock_guard<std::mutex> lock(sessions_mu_);
  const bool room = sessions_.size() < static_cast<size_t>(options_.max_connections);
  sessions_.emplace(session.get(), session);
  const int from_client = ++per_client_[session->peer()];
  if (!room) return Room::kFull;
  const int cap = options_.max_connections_per_client;
  return cap > 0 && from_client > cap ? Room::kClientFull : Room::kYes;
}

void BeastServer::Unregister(const Session* session) {
  std::lock_guard<std::mutex> lock(sessions_mu_);
  if (sessions_.erase(session) == 0) return;
  auto it = per_client_.find(session->peer());
  if (it != per_client_.end() && --it->second <= 0) per_client_.erase(it);
}

absl::Status BeastServer::Start() {
  std::lock_guard<std::mutex> lock(lifecycle_mu_);
  if (started_) return absl::FailedPreconditionError("http server: Start() called twice");
  if (options_.threads < 1 || options_.idle_timeout_ms < 1 || options_.max_connections < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "http server: want threads, idle_timeout_ms and max_connections >= 1, got ",
        options_.threads, ", ", options_.idle_timeout_ms, " and ", options_.max_connections));
  }
  if (options_.max_connections_per_client < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("http server: want max_connections_per_client >= 0, got ",
                     options_.max_connections_per_client));
  }
  absl::StatusOr<tcp::endpoint> parsed = ParseEndpoint(options_.address, options_.port);
  if (!parsed.ok()) return Annotate(parsed.status(), "http server");
  const tcp::endpoint endpoint = *parsed;
  const std::string where = FormatEndpoint(endpoint);

  beast::error_code ec;
  acceptor_.emplace(net::make_strand(ioc_));
  auto fail = [&](const char* step) {
    acceptor_.reset();
    return absl::UnavailableError(
        absl::StrCat("http server: ", step, " ", where, ": ", ec.message()));
  };
  if (acceptor_->open(endpoint.protocol(), ec)) return fail("opening a socket for");
  // Lets a restarted server bind while old connections sit in TIME_WAIT; a port another
  // process listens on still fails to bind.
  if (acceptor_->set_option(net::socket_base::reuse_address(true), ec)) {
    return fail("setting SO_REUSEADDR on");
  }
  if (acceptor_->bind(endpoint, ec)) return fail("binding");
  if (acceptor_->listen(net::socket_base::max_listen_connections, ec)) return fail("listening on");
  port_ = acceptor_->local_endpoint(ec).port();

  prefixes_.clear();
  for (const auto& route : routes_) {
    if (route.first.back() == '/') prefixes_.push_back(&route);
  }
  std::sort(prefixes_.begin(), prefixes_.end(),
            [](const auto* a, const auto* b) { return a->first.size() > b->first.size(); });

  started_ = true;
  Accept();
  for (int i = 0; i < options_.threads; ++i) {
    threads_.emplace_back([this] {
      // Handlers catch everything they can; this keeps a stray exception from a completion
      // handler from taking the process down with it.
      for (;;) {
        try {
          ioc_.run();
          return;
        } catch (const std::exception& e) {
          spdlog::error("http: worker caught an exception: {}", e.what());
        } catch (...) {
          spdlog::error("http: worker caught a non-exception");
        }
      }
    });
  }
  spdlog::info("http: serving on {} with {} threads", FormatEndpoint(
                   tcp::endpoint(endpoint.address(), static_cast<unsigned short>(port_.load()))),
               options_.threads);
  return absl::OkStatus();
}

void BeastServer::Accept() {
  acceptor_->async_accept(net::make_strand(ioc_),
                          beast::bind_front_handler(&BeastServer::OnAccept, this));
}

void BeastServer::OnAccept(beast::error_code ec, tcp::socket socket) {
  if (stopping()) return;  // `socket`, if any, closes on return
  if (ec) {
    if (ec == net::error::operation_aborted) return;
    spdlog::warn("http: accept failed: {}; retrying in {} ms", ec.message(), kAcceptRetry.count());
    accept_retry_.emplace(acceptor_->get_executor(), kAcceptRetry);
    accept_retry_->async_wait([this](beast::error_code wait_ec) {
      if (!wait_ec && !stopping()) Accept();
    });
    return;
  }
  beast::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);  // small responses go out at once
  std::make_shared<Session>(std::move(socket), this)->Run();
  Accept();
}

void BeastServer::Stop() {
  std::lock_guard<std::mutex> lock(lifecycle_mu_);
  if (!started_) return;
  if (!stopping_.exchange(true, std::memory_order_acq_rel)) {
    net::post(acceptor_->get_executor(), [this] {
      beast::error_code ignored;
      acceptor_->close(ignored);
      if (accept_retry_) accept_retry_->cancel();
    });
    std::vector<std::shared_ptr<Session>> sessions;
    {
      std::lock_guard<std::mutex> sessions_lock(sessions_mu_);
      for (const auto& [raw, weak] : sessions_) {
        if (auto session = weak.lock()) sessions.push_back(std::move(session));
      }
    }
    // Sessions registered after this point see stopping() before their first read.
    for (auto& session : sessions) session->PostShutdown();
  }
  // A handler calling Stop() cannot wait: the io_context counts the running handler as work,
  // so no worker would ever return from run().
  const std::thread::id self = std::this_thread::get_id();
  for (const std::thread& thread : threads_) {
    if (thread.get_id() == self) {
      spdlog::warn("http: Stop() called from a handler; a later Stop() or the destructor joins "
                   "the worker threads");
      return;
    }
  }
  // With the acceptor and every idle connection closed, the io_context runs out of work once
  // the requests in flight are answered, and each worker returns from run().
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

}  // namespace
}  // namespace internal

std::string_view RejectionName(Rejection rejection) {
  switch (rejection) {
    case Rejection::kMalformed: return "malformed";
    case Rejection::kHeaderTooLarge: return "header_too_large";
    case Rejection::kBodyTooLarge: return "body_too_large";
    case Rejection::kTimeout: return "timeout";
    case Rejection::kTooManyConnections: return "too_many_connections";
  }
  return "unknown";
}

std::unique_ptr<HttpServer> NewBeastServer(ServerOptions options) {
  return std::make_unique<internal::BeastServer>(std::move(options));
}

}  // namespace phalanx::http
