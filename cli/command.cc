#include "cli/command.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/text_input.h"

namespace phalanx::cli {

std::vector<Command>& Registry() {
  static std::vector<Command> commands;
  return commands;
}

std::vector<std::string> Groups() {
  std::vector<std::string> groups;
  for (const Command& command : Registry()) {
    const size_t space = command.name.find(' ');
    if (space == std::string::npos) continue;
    std::string group = command.name.substr(0, space);
    if (std::find(groups.begin(), groups.end(), group) == groups.end()) groups.push_back(group);
  }
  return groups;
}

std::string GroupUsage(const std::string& group) {
  std::vector<std::string> names;
  std::string list;
  for (const Command& command : Registry()) {
    if (!absl::StartsWith(command.name, absl::StrCat(group, " "))) continue;
    const std::string sub = command.name.substr(group.size() + 1);
    names.push_back(sub);
    absl::StrAppend(&list, absl::StrFormat("  %-12s %s\n", sub, command.summary));
  }
  return absl::StrCat("Usage: phalanx ", group, " <", absl::StrJoin(names, "|"),
                      "> [flags]\n\nSubcommands:\n", list, "\nRun 'phalanx ", group,
                      " <subcommand> --help' for its flags.");
}

namespace {

bool IsHelpFlag(std::string_view arg) { return arg == "--help" || arg == "-h"; }

void PrintHelp(FILE* out, const std::string& program) {
  std::fprintf(out,
               "%s: topology-aware gang scheduling for distributed training on Kubernetes\n\n"
               "Usage: %s <command> [flags]\n\nCommands:\n",
               program.c_str(), program.c_str());
  for (const Command& command : Registry()) {
    std::fprintf(out, "  %-20s %s\n", command.name.c_str(), command.summary.c_str());
  }
  std::fprintf(out,
               "\nRun '%s <command> --help' or '%s help <command>' for a command's flags, "
               "'%s --version' for the version.\n",
               program.c_str(), program.c_str(), program.c_str());
}

// The registered command whose words match the longest prefix of args; null if none.
const Command* Match(const std::vector<std::string>& args, size_t* words) {
  const Command* best = nullptr;
  *words = 0;
  for (const Command& command : Registry()) {
    std::vector<std::string> parts = absl::StrSplit(command.name, ' ');
    if (parts.size() > args.size() || parts.size() <= *words) continue;
    bool match = true;
    for (size_t i = 0; i < parts.size(); ++i) match = match && parts[i] == args[i];
    if (match) {
      best = &command;
      *words = parts.size();
    }
  }
  return best;
}

bool IsGroup(std::string_view word) {
  const std::vector<std::string> groups = Groups();
  return std::find(groups.begin(), groups.end(), word) != groups.end();
}

int Unknown(FILE* err, const std::string& program, const std::vector<std::string>& words) {
  std::fprintf(err, "%s: unknown command \"%s\"\n\n", program.c_str(),
               Printable(absl::StrJoin(words, " ")).c_str());
  PrintHelp(err, program);
  return kExitBadInput;
}

// `phalanx help WORDS...`: the usage of exactly that command or group.
int Help(FILE* out, FILE* err, const std::string& program, const std::vector<std::string>& words) {
  if (words.empty()) {
    PrintHelp(out, program);
    return kExitOk;
  }
  size_t matched = 0;
  const Command* command = Match(words, &matched);
  if (command != nullptr && matched == words.size()) {
    std::fprintf(out, "%s\n", command->usage.c_str());
    return kExitOk;
  }
  if (words.size() == 1 && IsGroup(words[0])) {
    std::fprintf(out, "%s\n", GroupUsage(words[0]).c_str());
    return kExitOk;
  }
  return Unknown(err, program, words);
}

}  // namespace

int Main(const std::string& program, const std::vector<std::string>& args, FILE* out,
         FILE* err) {
  if (args.empty()) {
    PrintHelp(err, program);
    return kExitBadInput;
  }
  if (IsHelpFlag(args[0])) {
    PrintHelp(out, program);
    return kExitOk;
  }
  if (args[0] == "help") return Help(out, err, program, {args.begin() + 1, args.end()});
  // `--version` is the `version` command, whatever follows.
  const std::vector<std::string> command_args =
      args[0] == "--version" ? std::vector<std::string>{"version"} : args;
  size_t words = 0;
  const Command* command = Match(command_args, &words);
  if (command == nullptr) {
    if (!IsGroup(args[0])) return Unknown(err, program, args);
    // A group without a known subcommand: its usage, on stdout if asked for.
    const bool asked = args.size() > 1 && IsHelpFlag(args[1]);
    if (asked) {
      std::fprintf(out, "%s\n", GroupUsage(args[0]).c_str());
      return kExitOk;
    }
    if (args.size() > 1) {
      std::fprintf(err, "phalanx %s: unknown subcommand %s\n\n", args[0].c_str(),
                   absl::StrCat("\"", Printable(args[1]), "\"").c_str());
    }
    std::fprintf(err, "%s\n", GroupUsage(args[0]).c_str());
    return kExitBadInput;
  }
  std::vector<std::string> rest(command_args.begin() + static_cast<long>(words),
                                command_args.end());
  if (std::any_of(rest.begin(), rest.end(), [](const std::string& a) { return IsHelpFlag(a); })) {
    std::fprintf(out, "%s\n", command->usage.c_str());
    return kExitOk;
  }
  return command->run(rest);
}

}  // namespace phalanx::cli
