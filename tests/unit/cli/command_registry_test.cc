// Every registered command and every group answers --help, -h and `help` the same way: exit
// 0 and a usage line naming it. Walks the real registry (the command objects are linked in).
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "cli/command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phalanx::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct CliRun {
  int code = -1;
  std::string out, err;
};

CliRun Cli(const std::vector<std::string>& args) {
  CliRun run;
  char* out_buffer = nullptr;
  char* err_buffer = nullptr;
  size_t out_size = 0, err_size = 0;
  FILE* out = open_memstream(&out_buffer, &out_size);
  FILE* err = open_memstream(&err_buffer, &err_size);
  run.code = Main("phalanx", args, out, err);
  std::fclose(out);
  std::fclose(err);
  run.out.assign(out_buffer, out_size);
  run.err.assign(err_buffer, err_size);
  std::free(out_buffer);
  std::free(err_buffer);
  return run;
}

std::vector<std::string> Words(const std::string& name) { return absl::StrSplit(name, ' '); }

std::vector<std::string> With(std::vector<std::string> words, std::vector<std::string> more,
                              bool before = false) {
  words.insert(before ? words.begin() : words.end(), more.begin(), more.end());
  return words;
}

TEST(CommandRegistryTest, HasEveryCommandAndGroup) {
  std::vector<std::string> names;
  for (const Command& command : Registry()) names.push_back(command.name);
  for (const char* name :
       {"version", "simulate", "plan", "demo", "bench admission", "bench placement",
        "bench extender", "placement reserve", "placement explain", "placement resize",
        "placement release", "placement snapshot", "queues", "jobs", "explain", "topology"}) {
    EXPECT_THAT(names, ::testing::Contains(name));
  }
  EXPECT_THAT(Groups(), ::testing::ElementsAre("bench", "placement"));
}

TEST(CommandRegistryTest, EveryCommandAnswersHelpTheSameThreeWays) {
  ASSERT_GE(Registry().size(), 16u);
  for (const Command& command : Registry()) {
    SCOPED_TRACE(command.name);
    const CliRun flag = Cli(With(Words(command.name), {"--help"}));
    EXPECT_EQ(flag.code, 0) << flag.err;
    EXPECT_THAT(flag.out, StartsWith("Usage: phalanx " + command.name));
    EXPECT_EQ(flag.out, command.usage + "\n");
    EXPECT_EQ(flag.err, "");
    // --help anywhere after the command, and -h.
    const CliRun late = Cli(With(Words(command.name), {"--json", "--help"}));
    EXPECT_EQ(late.code, 0);
    EXPECT_EQ(late.out, flag.out);
    const CliRun short_flag = Cli(With(Words(command.name), {"-h"}));
    EXPECT_EQ(short_flag.code, 0);
    EXPECT_EQ(short_flag.out, flag.out);
    const CliRun help = Cli(With(Words(command.name), {"help"}, /*before=*/true));
    EXPECT_EQ(help.code, 0);
    EXPECT_EQ(help.out, flag.out);
    EXPECT_FALSE(command.summary.empty());
  }
}

TEST(CommandRegistryTest, EveryGroupListsItsSubcommands) {
  for (const std::string& group : Groups()) {
    SCOPED_TRACE(group);
    const CliRun flag = Cli({group, "--help"});
    EXPECT_EQ(flag.code, 0);
    EXPECT_THAT(flag.out, StartsWith("Usage: phalanx " + group + " <"));
    EXPECT_EQ(Cli({"help", group}).out, flag.out);
    for (const Command& command : Registry()) {
      if (command.name.rfind(group + " ", 0) == 0) {
        EXPECT_THAT(flag.out, HasSubstr("  " + command.name.substr(group.size() + 1) + " "));
      }
    }
    // Without a subcommand, or with an unknown one, the usage is an error.
    const CliRun bare = Cli({group});
    EXPECT_EQ(bare.code, 2);
    EXPECT_EQ(bare.err, flag.out);
    const CliRun unknown = Cli({group, "\x1b[2Jnope"});
    EXPECT_EQ(unknown.code, 2);
    EXPECT_THAT(unknown.err, StartsWith("phalanx " + group + ": unknown subcommand \"\\x1b[2Jnope\""));
  }
}

TEST(CommandRegistryTest, TopLevelHelpAndUnknownCommands) {
  const CliRun help = Cli({"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_THAT(help.out, HasSubstr("Usage: phalanx <command> [flags]"));
  for (const Command& command : Registry()) EXPECT_THAT(help.out, HasSubstr("  " + command.name));
  EXPECT_EQ(Cli({"help"}).out, help.out);
  EXPECT_EQ(Cli({"-h"}).out, help.out);
  const CliRun none = Cli({});
  EXPECT_EQ(none.code, 2);
  EXPECT_EQ(none.err, help.out);
  const CliRun unknown = Cli({"help", "frobnicate"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_THAT(unknown.err, StartsWith("phalanx: unknown command \"frobnicate\""));
  const CliRun escaped = Cli({"\x1b[31mred"});
  EXPECT_EQ(escaped.code, 2);
  EXPECT_THAT(escaped.err, StartsWith("phalanx: unknown command \"\\x1b[31mred\""));
}

}  // namespace
}  // namespace phalanx::cli
