// RawConnection: a bare TCP connection for tests that must misbehave the way an HTTP client
// library never would (garbage bytes, half-sent bodies, resets, pipelining). Every read is
// bounded by a timeout, so a server that fails to answer fails the test instead of hanging it.
//
//   RawConnection raw(server->port());
//   raw.Send("\x01\x02 nonsense\r\n\r\n");
//   EXPECT_THAT(raw.ReadUntilClosed(), StartsWith("HTTP/1.1 400"));
#pragma once

#include <array>
#include <chrono>
#include <string>
#include <string_view>

#include "boost/asio/connect.hpp"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/read_until.hpp"
#include "boost/asio/write.hpp"

namespace phalanx::http::testing {

class RawConnection {
 public:
  // `source`: the local address to connect from (another 127.0.0.0/8 address is another
  // client to the server); "" lets the system choose.
  explicit RawConnection(int port, const std::string& source = "") : socket_(ioc_) {
    if (!source.empty()) {
      socket_.open(boost::asio::ip::tcp::v4());
      socket_.bind(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address(source), 0));
    }
    socket_.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"),
                                                   static_cast<unsigned short>(port)));
  }

  // Returns false if the server has already closed the connection (the write fails).
  bool Send(std::string_view bytes) {
    boost::system::error_code ec;
    boost::asio::write(socket_, boost::asio::buffer(bytes.data(), bytes.size()), ec);
    return !ec;
  }

  void ShutdownSend() {
    boost::system::error_code ignored;
    socket_.shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
  }

  // Closes with SO_LINGER 0: the server sees a connection reset, not a clean close.
  void Reset() {
    boost::system::error_code ignored;
    socket_.set_option(boost::asio::socket_base::linger(true, 0), ignored);
    socket_.close(ignored);
  }

  // Everything received until the server closes the connection. closed() says whether it did
  // within `timeout`.
  std::string ReadUntilClosed(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::string out = std::move(pending_);
    pending_.clear();
    closed_ = false;
    ReadSome(&out);
    RunFor(timeout);
    return out;
  }

  // Everything received up to and including the first `marker` ("" if it did not arrive
  // within `timeout`); bytes after it are kept for the next read.
  std::string ReadUntil(std::string_view marker,
                        std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::string result;
    boost::asio::async_read_until(
        socket_, boost::asio::dynamic_buffer(pending_), std::string(marker),
        [&](boost::system::error_code ec, size_t n) {
          if (!ec) {
            result = pending_.substr(0, n);
            pending_.erase(0, n);
          }
        });
    RunFor(timeout);
    return result;
  }

  bool closed() const { return closed_; }

 private:
  void ReadSome(std::string* out) {
    socket_.async_read_some(boost::asio::buffer(buffer_),
                            [this, out](boost::system::error_code ec, size_t n) {
                              out->append(buffer_.data(), n);
                              if (ec) {
                                closed_ = ec != boost::asio::error::operation_aborted;
                                return;
                              }
                              ReadSome(out);
                            });
  }

  void RunFor(std::chrono::milliseconds timeout) {
    ioc_.restart();
    ioc_.run_for(timeout);
    if (!ioc_.stopped()) {  // timed out: abandon the read
      boost::system::error_code ignored;
      socket_.cancel(ignored);
      ioc_.restart();
      ioc_.run();
    }
  }

  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::socket socket_;
  std::array<char, 4096> buffer_;
  std::string pending_;
  bool closed_ = false;
};

}  // namespace phalanx::http::testing
