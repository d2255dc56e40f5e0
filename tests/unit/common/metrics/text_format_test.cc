#include "common/metrics/text_format.h"

#include <cmath>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phalanx::metrics::internal {
namespace {

std::string Value(double value) {
  std::string out;
  AppendValue(value, &out);
  return out;
}

TEST(TextFormatTest, ValuesAreShortestRoundTripDecimalsOrPrometheusSpecials) {
  EXPECT_EQ(Value(0), "0");
  EXPECT_EQ(Value(3), "3");
  EXPECT_EQ(Value(-1.5), "-1.5");
  EXPECT_EQ(Value(0.0004), "0.0004");
  EXPECT_EQ(Value(0.1 + 0.2), "0.30000000000000004");  // no digits lost
  EXPECT_EQ(std::stod(Value(1e21)), 1e21);
  EXPECT_EQ(std::stod(Value(1.5e-9)), 1.5e-9);
  EXPECT_EQ(Value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(Value(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(Value(std::nan("")), "NaN");
}

TEST(TextFormatTest, LabelValuesEscapeBackslashQuoteAndNewline) {
  std::string out;
  AppendEscapedLabelValue("C:\\dir \"quoted\"\nnext\tline", &out);
  EXPECT_EQ(out, "C:\\\\dir \\\"quoted\\\"\\nnext\tline");
}

TEST(TextFormatTest, HelpEscapesBackslashAndNewlineButNotQuotes) {
  std::string out;
  AppendHeader("x", "a \"b\" \\ c\nd", "gauge", &out);
  EXPECT_EQ(out, "# HELP x a \"b\" \\\\ c\\nd\n# TYPE x gauge\n");
}

TEST(TextFormatTest, SampleLinesWithAndWithoutLabels) {
  std::string out;
  AppendSampleLine("x", {}, {}, "", "", 2.5, &out);
  AppendSampleLine("x_bucket", {}, {}, "le", "0.5", uint64_t{3}, &out);
  AppendSampleLine("y", {"a", "b"}, {"1", "q\""}, "", "", uint64_t{7}, &out);
  AppendSampleLine("y_bucket", {"a"}, {"1"}, "le", "+Inf", uint64_t{9}, &out);
  EXPECT_EQ(out,
            "x 2.5\n"
            "x_bucket{le=\"0.5\"} 3\n"
            "y{a=\"1\",b=\"q\\\"\"} 7\n"
            "y_bucket{a=\"1\",le=\"+Inf\"} 9\n");
}

}  // namespace
}  // namespace phalanx::metrics::internal
