#include "common/http/internal/beast_common.h"

#include "absl/strings/str_cat.h"

namespace phalanx::http::internal {

absl::StatusOr<tcp::endpoint> ParseEndpoint(std::string_view address, int port) {
  beast::error_code ec;
  net::ip::address ip = net::ip::make_address(std::string(address), ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", absl::string_view(address.data(), address.size()),
                     "\" is not an IP address: ", ec.message()));
  }
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("port ", port, " is outside 0..65535"));
  }
  return tcp::endpoint(ip, static_cast<unsigned short>(port));
}

std::string FormatEndpoint(const tcp::endpoint& endpoint) {
  const net::ip::address& ip = endpoint.address();
  if (ip.is_v6()) return absl::StrCat("[", ip.to_string(), "]:", endpoint.port());
  return absl::StrCat(ip.to_string(), ":", endpoint.port());
}

bool IsParseError(beast::error_code ec) {
  return ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category() &&
         ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message;
}

}  // namespace phalanx::http::internal
