#include "common/quantity.h"

#include <limits>
#include <string>

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phalanx {
namespace {

using ::phalanx::testing::IsOk;
using ::phalanx::testing::StatusIs;
using ::testing::HasSubstr;

struct ParseCase {
  std::string text;
  int64_t milli;
};

class QuantityParseTest : public ::testing::TestWithParam<ParseCase> {};

TEST_P(QuantityParseTest, ParsesExactly) {
  ASSERT_OK_AND_ASSIGN(Quantity q, Quantity::Parse(GetParam().text));
  EXPECT_EQ(q.MilliValue(), GetParam().milli) << GetParam().text;
}

INSTANTIATE_TEST_SUITE_P(
    KubernetesForms, QuantityParseTest,
    ::testing::Values(ParseCase{"8", 8000}, ParseCase{"500m", 500}, ParseCase{"0.5", 500},
                      ParseCase{".5", 500}, ParseCase{"5.", 5000}, ParseCase{"+3", 3000},
                      ParseCase{"-2", -2000}, ParseCase{"1k", 1000000},
                      ParseCase{"2Ti", int64_t{2} * 1024 * 1024 * 1024 * 1024 * 1000},
                      ParseCase{"1.5Gi", int64_t{1610612736} * 1000},
                      ParseCase{"1536Mi", int64_t{1610612736} * 1000},
                      ParseCase{"1e3", 1000000}, ParseCase{"1E3", 1000000},
                      ParseCase{"25e-1", 2500}, ParseCase{"1.5e+2", 150000},
                      ParseCase{"2M", 2000000000}, ParseCase{"0", 0}, ParseCase{"0.0001", 1},
                      ParseCase{"1P", int64_t{1000000000000000000}},
                      ParseCase{"100Ki", 102400000}));

TEST(QuantityTest, RoundsSubMilliUpLikeTheApiServer) {
  ASSERT_OK_AND_ASSIGN(Quantity q, Quantity::Parse("0.1m"));
  EXPECT_EQ(q.MilliValue(), 1);
  ASSERT_OK_AND_ASSIGN(Quantity r, Quantity::Parse("1.0001"));
  EXPECT_EQ(r.MilliValue(), 1001);
}

TEST(QuantityTest, ValueRoundsUpToWholeUnits) {
  EXPECT_EQ(Quantity::Parse("500m")->Value(), 1);
  EXPECT_EQ(Quantity::Parse("2")->Value(), 2);
  EXPECT_EQ(Quantity::Parse("2001m")->Value(), 3);
  EXPECT_EQ(Quantity::Parse("-1500m")->Value(), -1);
}

TEST(QuantityTest, RejectsGarbageWithAClearMessage) {
  EXPECT_THAT(Quantity::Parse(""), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty")));
  EXPECT_THAT(Quantity::Parse("Gi"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no digits")));
  EXPECT_THAT(Quantity::Parse("12Qi"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown suffix")));
  EXPECT_THAT(Quantity::Parse("1.2.3"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Quantity::Parse("8 "), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Quantity::Parse("1e"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("exponent")));
  EXPECT_THAT(Quantity::Parse("1ex"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Quantity::Parse("--1"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Quantity::Parse("abc"), StatusIs(absl::StatusCode::kInvalidArgument,
                                               HasSubstr("\"abc\"")));
}

TEST(QuantityTest, RejectsValuesThatDoNotFit) {
  EXPECT_THAT(Quantity::Parse("100E"), StatusIs(absl::StatusCode::kOutOfRange));
  EXPECT_THAT(Quantity::Parse("1e30"), StatusIs(absl::StatusCode::kOutOfRange));
  EXPECT_THAT(Quantity::Parse("1234567890123456789012345678901234567890"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("too many digits")));
}

TEST(QuantityTest, PrintsCanonicalText) {
  EXPECT_EQ(Quantity::Parse("1.5Gi")->ToString(), "1536Mi");
  EXPECT_EQ(Quantity::Parse("2048Ki")->ToString(), "2Mi");
  EXPECT_EQ(Quantity::Parse("500m")->ToString(), "500m");
  EXPECT_EQ(Quantity::Parse("8")->ToString(), "8");
  EXPECT_EQ(Quantity::Parse("2000")->ToString(), "2k");
  EXPECT_EQ(Quantity::Parse("1e3")->ToString(), "1e3");
  EXPECT_EQ(Quantity::Parse("0")->ToString(), "0");
}

TEST(QuantityTest, RoundTripsThroughText) {
  for (const char* text : {"1.5Gi", "250m", "7", "3e6", "12k", "64Gi", "0.25"}) {
    ASSERT_OK_AND_ASSIGN(Quantity q, Quantity::Parse(text));
    ASSERT_OK_AND_ASSIGN(Quantity back, Quantity::Parse(q.ToString()));
    EXPECT_EQ(q, back) << text << " -> " << q.ToString();
  }
}

// Found by tests/fuzz/fuzz_quantity: leading zeros of a fraction are not significant digits, so
// their count was unbounded and 10^count overflowed 128 bits (undefined behaviour).
TEST(QuantityTest, LongZeroFractionsDoNotOverflow) {
  std::string zeros = "." + std::string(60, '0');
  ASSERT_OK_AND_ASSIGN(Quantity zero, Quantity::Parse(zeros));
  EXPECT_EQ(zero.MilliValue(), 0);
  // Any non-zero amount, however small, rounds up to 1m, as the API server does.
  ASSERT_OK_AND_ASSIGN(Quantity tiny, Quantity::Parse("0." + std::string(60, '0') + "1"));
  EXPECT_EQ(tiny.MilliValue(), 1);
  ASSERT_OK_AND_ASSIGN(Quantity tiny_exp, Quantity::Parse("0.0000000001e-30"));
  EXPECT_EQ(tiny_exp.MilliValue(), 1);
  ASSERT_OK_AND_ASSIGN(Quantity tiny_milli, Quantity::Parse("0." + std::string(40, '0') + "5m"));
  EXPECT_EQ(tiny_milli.MilliValue(), 1);
  ASSERT_OK_AND_ASSIGN(Quantity exact, Quantity::Parse("0." + std::string(29, '0') + "1e30"));
  EXPECT_EQ(exact.MilliValue(), 1000);
}

// Found by the sanitizer build: FromValue multiplied by 1000 without a check (signed overflow).
// The thousandths are 128 bits wide now, so every int64 number of units is a quantity.
TEST(QuantityTest, FromValueTakesEveryInt64) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(Quantity::FromValue(kMax / 1000).MilliValue(), kMax / 1000 * 1000);
  EXPECT_EQ(Quantity::FromValue(kMax / 1000 + 1).MilliValue(), std::nullopt);
  EXPECT_EQ(Quantity::FromValue(kMax).Value(), kMax);
  EXPECT_EQ(Quantity::FromValue(kMax).ToString(), "9223372036854775807");
  EXPECT_EQ(Quantity::FromValue(kMin).Value(), kMin);
  EXPECT_EQ(Quantity::FromValue(kMin).ToString(), "-9223372036854775808");
}

// Found by hack/bench-e2e.sh --ladder 5000: its ClusterTrainingQueue's memory quota, twice
// 5,000 nodes' 2 TiB, was "too large" while thousandths were 64 bits (a ~9.2 peta-unit cap).
TEST(QuantityTest, ClusterSizedMemoryQuantitiesParse) {
  ASSERT_OK_AND_ASSIGN(Quantity quota, Quantity::Parse("20480000Gi"));
  EXPECT_EQ(quota.Value(), int64_t{20480000} << 30);
  EXPECT_EQ(quota.MilliValue(), std::nullopt);  // 2.2e19 thousandths
  EXPECT_TRUE(quota.IsWhole());
  EXPECT_EQ(quota.ToString(), "20000Ti");
  ASSERT_OK_AND_ASSIGN(Quantity most, Quantity::Parse("7Ei"));
  EXPECT_EQ(most.Value(), int64_t{7} << 60);
  ASSERT_OK_AND_ASSIGN(Quantity at_limit, Quantity::Parse("9223372036854775807"));
  EXPECT_EQ(at_limit.Value(), std::numeric_limits<int64_t>::max());
  EXPECT_THAT(Quantity::Parse("9223372036854775807.5"), StatusIs(absl::StatusCode::kOutOfRange));
  EXPECT_THAT(Quantity::Parse("8Ei"), StatusIs(absl::StatusCode::kOutOfRange));  // 2^63 bytes
  EXPECT_THAT(Quantity::Parse("-8Ei"), StatusIs(absl::StatusCode::kOutOfRange));
  // Thousandths beyond 64 bits still print exactly.
  ASSERT_OK_AND_ASSIGN(Quantity fraction, Quantity::Parse("9000000000000000.5"));
  EXPECT_FALSE(fraction.IsWhole());
  EXPECT_EQ(fraction.ToString(), "9000000000000000500m");
  EXPECT_EQ(fraction.Value(), 9000000000000001);
  ASSERT_OK_AND_ASSIGN(Quantity negative, Quantity::Parse("-9000000000000000.5"));
  EXPECT_EQ(negative.ToString(), "-9000000000000000500m");
  EXPECT_EQ(negative.Value(), -9000000000000000);
  EXPECT_LT(negative, fraction);
  EXPECT_LT(Quantity::FromValue(1), quota);
}

}  // namespace
}  // namespace phalanx
