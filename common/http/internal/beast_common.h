// What the Beast server (http_server_beast.cc) and client (http_client.cc) share: short names
// for the Boost namespaces, one way to name an address in errors ("127.0.0.1:8080",
// "[::1]:8080"), and which errors mean a malformed message rather than a lost connection.
//
//   ASSIGN_OR_RETURN(tcp::endpoint endpoint, ParseEndpoint("127.0.0.1", 8080));
//   spdlog::info("listening on {}", FormatEndpoint(endpoint));
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "boost/asio/ip/tcp.hpp"
#include "boost/beast/core/error.hpp"
#include "boost/beast/http/error.hpp"

namespace phalanx::http::internal {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
using tcp = boost::asio::ip::tcp;

// Capacity to give a connection's read buffer up front. Beast reads at most the buffer's free
// capacity (never less than 512 bytes) per read call, and a buffer that starts empty stays
// small, so a 100 KB body would arrive in ~200 reads of 512 bytes. Measured on a 100 KB POST:
// tests/bench/http_bench.cc, docs/http-and-metrics.md.
inline constexpr size_t kReadBufferBytes = 64 * 1024;

// `address` must be a numeric IPv4 or IPv6 address (a server listens on an address, not a
// name); InvalidArgument otherwise, or for a port outside 0..65535.
absl::StatusOr<tcp::endpoint> ParseEndpoint(std::string_view address, int port);

std::string FormatEndpoint(const tcp::endpoint& endpoint);

// True when Beast's HTTP parser rejected the bytes (bad request line, header, chunk, ...);
// false for I/O errors and for end_of_stream / partial_message, which mean the peer closed.
bool IsParseError(beast::error_code ec);

}  // namespace phalanx::http::internal
