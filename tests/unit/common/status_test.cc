#include "common/status.h"

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phalanx {
namespace {

using ::phalanx::testing::IsOk;
using ::phalanx::testing::StatusIs;
using ::testing::HasSubstr;

absl::StatusOr<int> Half(int x) {
  if (x % 2 != 0) return absl::InvalidArgumentError("odd");
  return x / 2;
}

absl::StatusOr<int> Quarter(int x) {
  ASSIGN_OR_RETURN(int half, Half(x));
  ASSIGN_OR_RETURN(half, Half(half));
  return half;
}

absl::Status CheckEven(int x) {
  RETURN_IF_ERROR(Half(x).status());
  return absl::OkStatus();
}

TEST(StatusTest, MacrosPropagateErrorsAndValues) {
  EXPECT_THAT(Quarter(8), IsOk());
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_THAT(Quarter(6), StatusIs(absl::StatusCode::kInvalidArgument, "odd"));
  EXPECT_THAT(CheckEven(4), IsOk());
  EXPECT_THAT(CheckEven(3), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(StatusTest, AnnotateKeepsTheCode) {
  EXPECT_THAT(Annotate(absl::NotFoundError("no node n1"), "reserving a/b"),
              StatusIs(absl::StatusCode::kNotFound, "reserving a/b: no node n1"));
  EXPECT_THAT(Annotate(absl::OkStatus(), "x"), IsOk());
}

TEST(StatusTest, AnnotateKeepsPayloads) {
  absl::Status status = absl::UnavailableError("try later");
  status.SetPayload("phalanx.dev/retry-after", absl::Cord("5"));
  absl::Status annotated = Annotate(status, "listing pods");
  ASSERT_TRUE(annotated.GetPayload("phalanx.dev/retry-after").has_value());
  EXPECT_EQ(std::string(*annotated.GetPayload("phalanx.dev/retry-after")), "5");
}

TEST(StatusTest, FormatsWithFmt) {
  EXPECT_EQ(fmt::format("{}", absl::NotFoundError("gone")), "NOT_FOUND: gone");
  EXPECT_THAT(fmt::format("{}", absl::StatusCode::kAborted), HasSubstr("ABORTED"));
}

}  // namespace
}  // namespace phalanx
