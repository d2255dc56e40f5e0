#include "operator/server/create_expectations.h"

#include <gtest/gtest.h>

namespace phalanx::operator_server {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'800'000'000);

TEST(CreateExpectations, ACreatedPodIsPendingUntilTheInformerShowsIt) {
  CreateExpectations e(absl::Seconds(60));
  e.Expect("ml/a", "a-0", kT0);
  e.Expect("ml/a", "a-1", kT0 + absl::Seconds(10));
  CreateExpectations::Pending p = e.PendingOf("ml/a", kT0 + absl::Seconds(20));
  EXPECT_EQ(p.names, (absl::flat_hash_set<std::string>{"a-0", "a-1"}));
  EXPECT_EQ(p.wait, absl::Seconds(40));  // a-0 lapses first
  e.Observed("ml/a", "a-0");
  p = e.PendingOf("ml/a", kT0 + absl::Seconds(20));
  EXPECT_EQ(p.names, (absl::flat_hash_set<std::string>{"a-1"}));
  EXPECT_EQ(p.wait, absl::Seconds(50));
  e.Observed("ml/a", "a-1");
  EXPECT_TRUE(e.PendingOf("ml/a", kT0).names.empty());
  EXPECT_EQ(e.size(), 0u);
}

TEST(CreateExpectations, OwnersAreSeparateAndUnknownNamesAreIgnored) {
  CreateExpectations e;
  e.Expect("ml/a", "x-0", kT0);
  e.Expect("ml/b", "x-0", kT0);
  e.Observed("ml/a", "x-0");
  e.Observed("ml/c", "x-0");     // nobody waits for it
  e.Observed("ml/b", "other-0");  // nor for this one
  EXPECT_TRUE(e.PendingOf("ml/a", kT0).names.empty());
  EXPECT_EQ(e.PendingOf("ml/b", kT0).names.size(), 1u);
  EXPECT_EQ(e.size(), 1u);
}

TEST(CreateExpectations, AnUnobservedExpectationLapsesAfterTheTtl) {
  CreateExpectations e(absl::Seconds(60));
  e.Expect("ml/a", "a-0", kT0);
  EXPECT_EQ(e.PendingOf("ml/a", kT0 + absl::Seconds(59)).names.size(), 1u);
  CreateExpectations::Pending p = e.PendingOf("ml/a", kT0 + absl::Seconds(60));
  EXPECT_TRUE(p.names.empty());
  EXPECT_EQ(p.wait, absl::InfiniteDuration());
  EXPECT_EQ(e.size(), 0u);  // dropped, not kept forever
}

TEST(CreateExpectations, ExpectingAgainRestartsTheWait) {
  // A pod created, observed, deleted (a gang restart) and created again under the same name.
  CreateExpectations e(absl::Seconds(60));
  e.Expect("ml/a", "a-0", kT0);
  e.Observed("ml/a", "a-0");
  e.Expect("ml/a", "a-0", kT0 + absl::Seconds(100));
  CreateExpectations::Pending p = e.PendingOf("ml/a", kT0 + absl::Seconds(130));
  EXPECT_EQ(p.names.size(), 1u);
  EXPECT_EQ(p.wait, absl::Seconds(30));
}

}  // namespace
}  // namespace phalanx::operator_server
