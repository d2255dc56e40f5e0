// The cpprest transport's failure modes that need no server: bad configuration fails at
// construction, and a closed port is Unavailable rather than an exception or a hang.
#include "kube/transport_cpprest.h"

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/rest_client.h"

namespace kube {
namespace {

using ::phalanx::testing::StatusIs;
using ::testing::HasSubstr;

TEST(CpprestTransportTest, RejectsUnusableConfiguration) {
  EXPECT_THAT(NewCpprestTransport(RestConfig{.server = "127.0.0.1:6443"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("http(s) URL")));
  EXPECT_THAT(NewCpprestTransport(RestConfig{.server = "https://127.0.0.1:6443",
                                             .ca_pem = "not a certificate"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("TLS")));
  EXPECT_THAT(NewCpprestTransport(RestConfig{.server = "https://127.0.0.1:6443",
                                             .client_cert_pem = "garbage",
                                             .client_key_pem = "garbage"}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(CpprestTransportTest, ClosedPortIsUnavailable) {
  // Port 1 on loopback: nothing listens there, the connection is refused at once.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Transport> transport,
                       NewCpprestTransport(RestConfig{.server = "http://127.0.0.1:1"},
                                           {.request_timeout = absl::Seconds(5)}));
  RestClient client(*transport);
  EXPECT_THAT(client.Get(Pods(), "default", "p"), StatusIs(absl::StatusCode::kUnavailable));
  absl::Status watch = client.Watch(Pods(), "", {}, [](const WatchEvent&) { return true; });
  EXPECT_THAT(watch, StatusIs(absl::StatusCode::kUnavailable));
}

}  // namespace
}  // namespace kube
