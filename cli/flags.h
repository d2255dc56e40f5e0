// The one flag parser of the `phalanx` commands, and how they report bad input.
//
//   int32_t jobs = 3000;
//   bool json = false;
//   FlagSet flags;
//   flags.Int({"--jobs"}, &jobs, 1, 1'000'000).Bool({"--json"}, &json);
//   if (absl::Status s = flags.Parse(args); !s.ok()) return BadInput("simulate", s);
//   // "phalanx simulate: --jobs: -1 is out of range (want 1 to 1000000) (see phalanx simulate --help)"
//
// Flags are "--name value" or "--name=value"; a boolean flag alone means true, or takes
// "=true"/"=false". Every value echoed back in a message is escaped (common/text_input.h:
// Printable), so a message never carries raw control bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace phalanx::cli {

class FlagSet {
 public:
  // A flag alone sets *out = true; "--flag=true|false" sets either.
  FlagSet& Bool(std::initializer_list<absl::string_view> names, bool* out);
  FlagSet& String(std::initializer_list<absl::string_view> names, std::string* out);
  // Repeatable: each value is appended.
  FlagSet& Strings(std::initializer_list<absl::string_view> names, std::vector<std::string>* out);
  // An integer in [min, max]. Messages: `--jobs: want an integer, got "abc"` (also for 2.5),
  // `--jobs: -1 is out of range (want 1 to 1000000)` (also for 1e99 and for values beyond
  // 64 bits).
  FlagSet& Int(std::initializer_list<absl::string_view> names, int32_t* out, int64_t min,
               int64_t max);
  FlagSet& Int(std::initializer_list<absl::string_view> names, int64_t* out, int64_t min,
               int64_t max);
  FlagSet& Uint(std::initializer_list<absl::string_view> names, uint64_t* out);
  // A finite number in [min, max], or (min, max] with `min_exclusive`.
  FlagSet& Double(std::initializer_list<absl::string_view> names, double* out, double min,
                  double max, bool min_exclusive = false);
  // Anything else: `parse` checks and stores the value, returning InvalidArgument with the
  // message to show (without the flag's name, which is prefixed).
  FlagSet& Custom(std::initializer_list<absl::string_view> names,
                  std::function<absl::Status(const std::string& value)> parse);

  // Parses `args`. Arguments that are not flags go to `positional` when given, and are an
  // error otherwise. InvalidArgument names the flag and the value.
  absl::Status Parse(const std::vector<std::string>& args,
                     std::vector<std::string>* positional = nullptr);

  // Whether the flag (any of its names) was given.
  bool Seen(absl::string_view name) const;

 private:
  struct Flag {
    std::vector<std::string> names;
    bool boolean = false;
    std::function<absl::Status(const std::string& value)> parse;
  };
  FlagSet& Add(std::initializer_list<absl::string_view> names, bool boolean,
               std::function<absl::Status(const std::string&)> parse);
  const Flag* Find(absl::string_view name) const;

  std::vector<Flag> flags_;
  std::set<std::string> seen_;  // first names of the flags given
};

// The integer in `text`, in [min, max]; the messages of FlagSet::Int (naming `flag`).
absl::StatusOr<int64_t> ParseInteger(absl::string_view flag, absl::string_view text, int64_t min,
                                     int64_t max);

// OK if `path` is empty or names a file that can be created or overwritten: InvalidArgument
// "<path>: is a directory" or "<path>: directory <dir> does not exist" otherwise. For output
// files, checked before the work that produces them.
absl::Status CheckOutputFile(const std::string& path);

// Whether two paths, both non-empty, name one file (the same path after resolving "..", symbolic
// links and the current directory, whether or not the file exists yet).
bool SameFile(const std::string& a, const std::string& b);

// `"text"` escaped for a message.
std::string Quoted(absl::string_view text);

// "phalanx <command>: <message> (see phalanx <command> --help)" on stderr; returns exit code 2.
int BadInput(absl::string_view command, absl::string_view message);
int BadInput(absl::string_view command, const absl::Status& status);

// "phalanx <command>: <line>" on stderr for each line of the message; returns 2 for InvalidArgument (bad input: a file
// or a value), 1 otherwise.
int Fail(absl::string_view command, const absl::Status& status);

// `text` on stdout with control bytes escaped (newlines kept): for output that carries what
// users wrote (job names, labels).
void PrintOut(absl::string_view text);

}  // namespace phalanx::cli
