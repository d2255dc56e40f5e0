#include "cli/flags.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/text_input.h"

namespace phalanx::cli {
namespace {

absl::Status Invalid(absl::string_view flag, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(Printable(flag), ": ", std::string(message)));
}

std::string Range(int64_t min, int64_t max) {
  if (max == std::numeric_limits<int64_t>::max()) return absl::StrCat("want >= ", min);
  return absl::StrCat("want ", min, " to ", max);
}

bool AllDigits(absl::string_view text) {
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) text.remove_prefix(1);
  if (text.empty()) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

std::string Quoted(absl::string_view text) { return absl::StrCat("\"", Printable(text), "\""); }

absl::StatusOr<int64_t> ParseInteger(absl::string_view flag, absl::string_view text, int64_t min,
                                     int64_t max) {
  int64_t value = 0;
  if (absl::SimpleAtoi(text, &value)) {
    if (value < min || value > max) {
      return Invalid(flag, absl::StrCat(value, " is out of range (", Range(min, max), ")"));
    }
    return value;
  }
  double number = 0;
  // Integer digits too long for 64 bits, or a number in another notation (1e99, 2.5).
  const bool numeric = AllDigits(text) ||
                       (absl::SimpleAtod(text, &number) && std::isfinite(number) &&
                        !absl::ascii_isalpha(static_cast<unsigned char>(text.back())));
  if (numeric && (AllDigits(text) || number < static_cast<double>(min) ||
                  number > static_cast<double>(max))) {
    return Invalid(flag, absl::StrCat(Printable(text), " is out of range (", Range(min, max),
                                      ")"));
  }
  return Invalid(flag, absl::StrCat("want an integer, got ", Quoted(text)));
}

FlagSet& FlagSet::Add(std::initializer_list<absl::string_view> names, bool boolean,
                      std::function<absl::Status(const std::string&)> parse) {
  Flag flag{.boolean = boolean, .parse = std::move(parse)};
  for (absl::string_view name : names) flag.names.emplace_back(name);
  flags_.push_back(std::move(flag));
  return *this;
}

FlagSet& FlagSet::Bool(std::initializer_list<absl::string_view> names, bool* out) {
  const std::string name(*names.begin());
  return Add(names, true, [out, name](const std::string& value) -> absl::Status {
    if (value != "true" && value != "false") {
      return Invalid(name, absl::StrCat("want true or false, got ", Quoted(value)));
    }
    *out = value == "true";
    return absl::OkStatus();
  });
}

FlagSet& FlagSet::String(std::initializer_list<absl::string_view> names, std::string* out) {
  return Add(names, false, [out](const std::string& value) {
    *out = value;
    return absl::OkStatus();
  });
}

FlagSet& FlagSet::Strings(std::initializer_list<absl::string_view> names,
                          std::vector<std::string>* out) {
  return Add(names, false, [out](const std::string& value) {
    out->push_back(value);
    return absl::OkStatus();
  });
}

FlagSet& FlagSet::Int(std::initializer_list<absl::string_view> names, int64_t* out, int64_t min,
                      int64_t max) {
  const std::string name(*names.begin());
  return Add(names, false, [=](const std::string& value) -> absl::Status {
    absl::StatusOr<int64_t> n = ParseInteger(name, value, min, max);
    if (!n.ok()) return n.status();
    *out = *n;
    return absl::OkStatus();
  });
}

FlagSet& FlagSet::Int(std::initializer_list<absl::string_view> names, int32_t* out, int64_t min,
                      int64_t max) {
  const std::string name(*names.begin());
  min = std::max<int64_t>(min, std::numeric_limits<int32_t>::min());
  max = std::min<int64_t>(max, std::numeric_limits<int32_t>::max());
  return Add(names, false, [=](const std::string& value) -> absl::Status {
    absl::StatusOr<int64_t> n = ParseInteger(name, value, min, max);
    if (!n.ok()) return n.status();
    *out = static_cast<int32_t>(*n);
    return absl::OkStatus();
  });
}

FlagSet& FlagSet::Uint(std::initializer_list<absl::string_view> names, uint64_t* out) {
  const std::string name(*names.begin());
  return Add(names, false, [=](const std::string& value) -> absl::Status {
    if (absl::SimpleAtoi(value, out) && !value.empty() && value[0] != '-') {
      return absl::OkStatus();
    }
    double number = 0;
    const bool numeric = AllDigits(value) || (absl::SimpleAtod(value, &number) &&
                                              std::isfinite(number) && number == std::trunc(number));
    if (numeric) {
      return Invalid(name, absl::StrCat(Printable(value), " is out of range (want 0 to ",
                                        std::numeric_limits<uint64_t>::max(), ")"));
    }
    return Invalid(name, absl::StrCat("want a non-negative integer, got ", Quoted(value)));
  });
}

FlagSet& FlagSet::Double(std::initializer_list<absl::string_view> names, double* out, double min,
                         double max, bool min_exclusive) {
  const std::string name(*names.begin());
  return Add(names, false, [=](const std::string& value) -> absl::Status {
    double number = 0;
    if (!absl::SimpleAtod(value, &number) || std::isnan(number)) {
      return Invalid(name, absl::StrCat("want a number, got ", Quoted(value)));
    }
    if (number < min || number > max || (min_exclusive && number == min)) {
      return Invalid(name, absl::StrFormat("%s is out of range (want %s %g and <= %g)",
                                           Printable(value), min_exclusive ? ">" : ">=", min,
                                           max));
    }
    *out = number;
    return absl::OkStatus();
  });
}

FlagSet& FlagSet::Custom(std::initializer_list<absl::string_view> names,
                         std::function<absl::Status(const std::string& value)> parse) {
  const std::string name(*names.begin());
  return Add(names, false, [name, parse](const std::string& value) -> absl::Status {
    absl::Status status = parse(value);
    if (status.ok()) return status;
    return Invalid(name, status.message());
  });
}

const FlagSet::Flag* FlagSet::Find(absl::string_view name) const {
  for (const Flag& flag : flags_) {
    for (const std::string& n : flag.names) {
      if (n == name) return &flag;
    }
  }
  return nullptr;
}

absl::Status FlagSet::Parse(const std::vector<std::string>& args,
                            std::vector<std::string>* positional) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    if (name.size() < 2 || name[0] != '-') {
      if (positional == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("unexpected argument ", Quoted(name)));
      }
      positional->push_back(name);
      continue;
    }
    std::optional<std::string> value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    const Flag* flag = Find(name);
    if (flag == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag ", Printable(name)));
    }
    if (!value) {
      if (flag->boolean) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return Invalid(name, "needs a value");
      }
    }
    if (absl::Status parsed = flag->parse(*value); !parsed.ok()) return parsed;
    seen_.insert(flag->names[0]);
  }
  return absl::OkStatus();
}

bool FlagSet::Seen(absl::string_view name) const {
  const Flag* flag = Find(name);
  return flag != nullptr && seen_.count(flag->names[0]) > 0;
}

absl::Status CheckOutputFile(const std::string& path) {
  if (path.empty()) return absl::OkStatus();
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return absl::InvalidArgumentError(absl::StrCat(Printable(path), ": is a directory"));
  }
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent, error)) {
    return absl::InvalidArgumentError(absl::StrCat(Printable(path), ": directory ",
                                                   Printable(parent.string()), " does not exist"));
  }
  return absl::OkStatus();
}

bool SameFile(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  std::error_code error_a, error_b;
  const std::filesystem::path x = std::filesystem::weakly_canonical(a, error_a);
  const std::filesystem::path y = std::filesystem::weakly_canonical(b, error_b);
  if (error_a || error_b) return a == b;
  return x == y;
}

int BadInput(absl::string_view command, absl::string_view message) {
  std::fprintf(stderr, "phalanx %s: %s (see phalanx %s --help)\n", std::string(command).c_str(),
               PrintableLines(message).c_str(), std::string(command).c_str());
  return 2;
}

int BadInput(absl::string_view command, const absl::Status& status) {
  return BadInput(command, status.message());
}

int Fail(absl::string_view command, const absl::Status& status) {
  for (absl::string_view line : absl::StrSplit(status.message(), '\n')) {
    std::fprintf(stderr, "phalanx %s: %s\n", std::string(command).c_str(),
                 Printable(line).c_str());
  }
  return absl::IsInvalidArgument(status) ? 2 : 1;
}

void PrintOut(absl::string_view text) {
  const std::string out = PrintableLines(text);
  std::fwrite(out.data(), 1, out.size(), stdout);
}

}  // namespace phalanx::cli
