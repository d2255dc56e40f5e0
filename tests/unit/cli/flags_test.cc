#include "cli/flags.h"

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phalanx::cli {
namespace {

using ::phalanx::testing::StatusIs;

// The message of parsing `args` with the flags every test below declares ("OK" if it parses).
std::string Parse(const std::vector<std::string>& args) {
  int32_t jobs = 0;
  int64_t big = 0;
  uint64_t seed = 0;
  double load = 0;
  bool json = false;
  std::string file;
  FlagSet flags;
  flags.Int({"--jobs"}, &jobs, 1, 1'000'000)
      .Int({"--big"}, &big, 0, std::numeric_limits<int64_t>::max())
      .Uint({"--seed"}, &seed)
      .Double({"--load"}, &load, 0, 10, true)
      .Bool({"--json"}, &json)
      .String({"-f", "--file"}, &file)
      .Custom({"--pair"}, [](const std::string& value) {
        return value.find(':') != std::string::npos
                   ? absl::OkStatus()
                   : absl::InvalidArgumentError("want A:B, got " + Quoted(value));
      });
  absl::Status status = flags.Parse(args);
  return status.ok() ? "OK" : std::string(status.message());
}

TEST(FlagSetTest, ParsesEveryKindOfFlag) {
  int32_t jobs = 0;
  uint64_t seed = 0;
  double load = 0;
  bool json = false;
  std::string file;
  std::vector<std::string> positional;
  FlagSet flags;
  flags.Int({"--jobs"}, &jobs, 1, 100)
      .Uint({"--seed"}, &seed)
      .Double({"--load"}, &load, 0, 10)
      .Bool({"--json"}, &json)
      .String({"-f", "--file"}, &file);
  ASSERT_TRUE(flags
                  .Parse({"--jobs", "7", "--seed=18446744073709551615", "--load", "0.5",
                          "--json", "x", "-f", "a.yaml"},
                         &positional)
                  .ok());
  EXPECT_EQ(jobs, 7);
  EXPECT_EQ(seed, 18446744073709551615u);
  EXPECT_EQ(load, 0.5);
  EXPECT_TRUE(json);
  EXPECT_EQ(file, "a.yaml");
  EXPECT_EQ(positional, std::vector<std::string>{"x"});
  EXPECT_TRUE(flags.Seen("--file"));
  EXPECT_TRUE(flags.Seen("-f"));
  EXPECT_FALSE(FlagSet().Seen("--jobs"));
  ASSERT_TRUE(flags.Parse({"--json=false"}).ok());
  EXPECT_FALSE(json);
}

TEST(FlagSetTest, EveryBadValueHasItsOwnMessageNamingFlagAndValue) {
  EXPECT_EQ(Parse({"--jobs", "-1"}), "--jobs: -1 is out of range (want 1 to 1000000)");
  EXPECT_EQ(Parse({"--jobs", "0"}), "--jobs: 0 is out of range (want 1 to 1000000)");
  EXPECT_EQ(Parse({"--jobs", "1000001"}), "--jobs: 1000001 is out of range (want 1 to 1000000)");
  EXPECT_EQ(Parse({"--jobs", "1e99"}), "--jobs: 1e99 is out of range (want 1 to 1000000)");
  EXPECT_EQ(Parse({"--jobs", "99999999999999999999"}),
            "--jobs: 99999999999999999999 is out of range (want 1 to 1000000)");
  EXPECT_EQ(Parse({"--jobs", "2.5"}), "--jobs: want an integer, got \"2.5\"");
  EXPECT_EQ(Parse({"--jobs", "abc"}), "--jobs: want an integer, got \"abc\"");
  EXPECT_EQ(Parse({"--jobs", ""}), "--jobs: want an integer, got \"\"");
  EXPECT_EQ(Parse({"--jobs", "nan"}), "--jobs: want an integer, got \"nan\"");
  EXPECT_EQ(Parse({"--jobs=inf"}), "--jobs: want an integer, got \"inf\"");
  EXPECT_EQ(Parse({"--big", "-3"}), "--big: -3 is out of range (want >= 0)");
  EXPECT_EQ(Parse({"--seed", "abc"}), "--seed: want a non-negative integer, got \"abc\"");
  EXPECT_EQ(Parse({"--seed", "-1"}), "--seed: -1 is out of range (want 0 to 18446744073709551615)");
  EXPECT_EQ(Parse({"--seed", "99999999999999999999"}),
            "--seed: 99999999999999999999 is out of range (want 0 to 18446744073709551615)");
  EXPECT_EQ(Parse({"--load", "0"}), "--load: 0 is out of range (want > 0 and <= 10)");
  EXPECT_EQ(Parse({"--load", "11"}), "--load: 11 is out of range (want > 0 and <= 10)");
  EXPECT_EQ(Parse({"--load", "lots"}), "--load: want a number, got \"lots\"");
  EXPECT_EQ(Parse({"--load", "nan"}), "--load: want a number, got \"nan\"");
  EXPECT_EQ(Parse({"--json=yes"}), "--json: want true or false, got \"yes\"");
  EXPECT_EQ(Parse({"--pair", "x"}), "--pair: want A:B, got \"x\"");
  EXPECT_EQ(Parse({"--jobs"}), "--jobs: needs a value");
  EXPECT_EQ(Parse({"--frobnicate"}), "unknown flag --frobnicate");
  EXPECT_EQ(Parse({"stray"}), "unexpected argument \"stray\"");
}

TEST(FlagSetTest, EchoedValuesNeverCarryControlBytes) {
  EXPECT_EQ(Parse({"--jobs", "\x1b[31m"}), "--jobs: want an integer, got \"\\x1b[31m\"");
  EXPECT_EQ(Parse({"--\x1b]0;title\x07"}), "unknown flag --\\x1b]0;title\\x07");
  EXPECT_EQ(Parse({"a\nb"}), "unexpected argument \"a\\x0ab\"");
  EXPECT_EQ(Parse({"--load", "\xff"}), "--load: want a number, got \"\\xff\"");
}

TEST(CheckOutputFileTest, DirectoriesAndMissingParentsAreRefusedUpFront) {
  const std::string dir = ::testing::TempDir();
  EXPECT_TRUE(CheckOutputFile("").ok());
  EXPECT_TRUE(CheckOutputFile(dir + "/report.html").ok());
  EXPECT_THAT(CheckOutputFile(dir),
              StatusIs(absl::StatusCode::kInvalidArgument, dir + ": is a directory"));
  EXPECT_THAT(CheckOutputFile(dir + "/no/such/report.html"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       dir + "/no/such/report.html: directory " + dir +
                           "/no/such does not exist"));
}

}  // namespace
}  // namespace phalanx::cli
