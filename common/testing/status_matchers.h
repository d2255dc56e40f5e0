// gMock matchers for absl::Status and absl::StatusOr<T>.
//
//   EXPECT_THAT(Parse("8"), IsOk());
//   EXPECT_THAT(Parse("8x"), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("suffix")));
//   ASSERT_OK_AND_ASSIGN(Quantity q, Quantity::Parse("1.5Gi"));
#pragma once

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phalanx::testing {

inline const absl::Status& GetStatus(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

MATCHER(IsOk, "is OK") {
  const absl::Status& status = ::phalanx::testing::GetStatus(arg);
  if (!status.ok()) *result_listener << "status is " << status.ToString();
  return status.ok();
}

MATCHER_P(StatusIs, code,
          std::string("has status code ") + absl::StatusCodeToString(code)) {
  const absl::Status& status = ::phalanx::testing::GetStatus(arg);
  *result_listener << "status is " << status.ToString();
  return status.code() == code;
}

MATCHER_P2(StatusIs, code, message_matcher,
           std::string("has status code ") + absl::StatusCodeToString(code) +
               " and a message that " +
               ::testing::DescribeMatcher<std::string>(message_matcher)) {
  const absl::Status& status = ::phalanx::testing::GetStatus(arg);
  *result_listener << "status is " << status.ToString();
  return status.code() == code &&
         ::testing::ExplainMatchResult(message_matcher, std::string(status.message()),
                                       result_listener);
}

}  // namespace phalanx::testing

#define PHALANX_TESTING_CONCAT_INNER_(a, b) a##b
#define PHALANX_TESTING_CONCAT_(a, b) PHALANX_TESTING_CONCAT_INNER_(a, b)
#define PHALANX_ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                       \
  ASSERT_TRUE(tmp.ok()) << tmp.status().ToString();         \
  lhs = std::move(tmp).value()

// Asserts that `rexpr` (an absl::StatusOr<T>) is OK and assigns its value to `lhs`.
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr) \
  PHALANX_ASSERT_OK_AND_ASSIGN_IMPL_(PHALANX_TESTING_CONCAT_(statusor_, __LINE__), lhs, rexpr)
#define ASSERT_OK(expr) ASSERT_THAT(expr, ::phalanx::testing::IsOk())
#define EXPECT_OK(expr) EXPECT_THAT(expr, ::phalanx::testing::IsOk())
