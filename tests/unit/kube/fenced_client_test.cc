// FencedClient: writes only inside the lease fence, reads always; the fence as LeaderElector
// keeps it is tested in leader_election_test.cc.
#include "kube/fenced_client.h"

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/resource.h"
#include "kube/rest_client.h"
#include "tests/mocks/kube/mock_clock.h"
#include "tests/mocks/kube/mock_transport.h"

namespace kube {
namespace {

using ::testing::_;
using ::testing::HasSubstr;
using ::testing::Return;

class FencedClientTest : public ::testing::Test {
 protected:
  FencedClientTest() {
    ON_CALL(transport_, Send(_)).WillByDefault(Return(HttpResponse{.status = 200, .body = "{}"}));
  }
  // Every kind of write through the fenced client; the statuses they returned.
  std::vector<absl::Status> WriteAll() {
    return {fenced_.Create(ConfigMaps(), "ns", R"({"metadata":{"name":"a"}})").status(),
            fenced_.Update(ConfigMaps(), "ns", "a", "{}").status(),
            fenced_.Patch(ConfigMaps(), "ns", "a", PatchType::kMerge, "{}").status(),
            fenced_.Delete(ConfigMaps(), "ns", "a")};
  }

  ::testing::NiceMock<MockTransport> transport_;
  RestClient inner_{transport_};
  FakeClock clock_;
  LeaseFence fence_;
  FencedClient fenced_{inner_, fence_, "phalanx-system/op", clock_};
};

TEST_F(FencedClientTest, WritesOnlyInsideTheFenceReadsAlways) {
  // Not held: no write reaches the API server; a read does.
  EXPECT_CALL(transport_, Send(_)).Times(1);
  for (const absl::Status& s : WriteAll()) {
    EXPECT_TRUE(absl::IsUnavailable(s)) << s;
    EXPECT_THAT(s.message(), HasSubstr("Lease phalanx-system/op (not acquired, or lost)"));
  }
  EXPECT_OK(fenced_.Get(ConfigMaps(), "ns", "a").status());
  ::testing::Mock::VerifyAndClearExpectations(&transport_);

  // Held for 10 s: writes go through.
  fence_.HoldUntil(clock_.Now() + absl::Seconds(10));
  EXPECT_CALL(transport_, Send(_)).Times(4);
  for (const absl::Status& s : WriteAll()) EXPECT_OK(s);
  ::testing::Mock::VerifyAndClearExpectations(&transport_);

  // Past it (a process frozen longer than the renew deadline wakes up): refused again, saying
  // when the fence ended.
  clock_.Advance(absl::Seconds(10));
  EXPECT_CALL(transport_, Send(_)).Times(0);
  for (const absl::Status& s : WriteAll()) {
    EXPECT_TRUE(absl::IsUnavailable(s)) << s;
    EXPECT_THAT(s.message(),
                HasSubstr("not renewed in time: the fence ended at 2026-01-01T00:00:10"));
  }
  ::testing::Mock::VerifyAndClearExpectations(&transport_);

  fence_.HoldUntil(clock_.Now() + absl::Seconds(10));
  fence_.Drop();
  EXPECT_CALL(transport_, Send(_)).Times(0);
  EXPECT_TRUE(absl::IsUnavailable(WriteAll()[0]));
}

}  // namespace
}  // namespace kube
