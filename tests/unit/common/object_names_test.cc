#include "common/object_names.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phalanx {
namespace {

using ::testing::HasSubstr;

// The CRDs' pattern for spec.queueName and spec.clusterQueue, which the API server applies to
// object names too: dot-separated parts of [a-z0-9-], each starting and ending alphanumeric.
TEST(ObjectNamesTest, DnsSubdomainsAsTheApiServerChecksThem) {
  for (const char* good : {"a", "team-a", "0", "job-000001", "llama.70b", "a-b.c-d.e", "9lives"}) {
    EXPECT_EQ(DnsSubdomainProblem(good), "") << good;
  }
  for (const char* bad : {"Team_A", "team_a", "-a", "a-", "a..b", ".a", "a.", "a.-b", "a,b", "a b",
                          "x\ay", "ünï", "#exp1", "a\"b"}) {
    EXPECT_THAT(DnsSubdomainProblem(bad), HasSubstr("(a DNS-1123 subdomain)")) << bad;
  }
  EXPECT_EQ(DnsSubdomainProblem(""), "must not be empty");
  EXPECT_EQ(DnsSubdomainProblem(std::string(253, 'a')), "");
  EXPECT_EQ(DnsSubdomainProblem(std::string(254, 'a')), "must be at most 253 characters, not 254");
}

TEST(ObjectNamesTest, Dns1035LabelsStartWithALetterAndHaveNoDots) {
  EXPECT_TRUE(IsDns1035Label("demo-1", 57));
  EXPECT_TRUE(IsDns1035Label(std::string(57, 'a'), 57));
  EXPECT_FALSE(IsDns1035Label(std::string(58, 'a'), 57));
  for (const char* bad : {"", "1demo", "demo.a", "Demo", "demo-", "-demo", "de_mo"}) {
    EXPECT_FALSE(IsDns1035Label(bad, 57)) << bad;
  }
}

// Names in messages never carry raw control bytes, nor a whole megabyte of text.
TEST(ObjectNamesTest, ShownNamesAreEscapedAndBounded) {
  EXPECT_EQ(ShownName("team-a"), "\"team-a\"");
  EXPECT_EQ(ShownName("x\ay"), "\"x\\x07y\"");
  EXPECT_EQ(ShownName(std::string(1000, 'a')), "(1000 characters)");
}

}  // namespace
}  // namespace phalanx
