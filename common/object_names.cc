#include "common/object_names.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/text_input.h"

namespace phalanx {
namespace {

bool IsLowerAlnum(char c) { return absl::ascii_islower(c) || absl::ascii_isdigit(c); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])? without the length limit, the first character also checked by
// `first` (a DNS-1035 label starts with a letter).
bool IsLabel(absl::string_view part, bool (*first)(char)) {
  if (part.empty() || !first(part.front()) || !IsLowerAlnum(part.back())) return false;
  for (char c : part) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

}  // namespace

std::string DnsSubdomainProblem(absl::string_view name) {
  if (name.empty()) return "must not be empty";
  if (name.size() > kMaxDnsSubdomainLength) {
    return absl::StrCat("must be at most ", kMaxDnsSubdomainLength, " characters, not ",
                        name.size());
  }
  for (absl::string_view part : absl::StrSplit(name, '.')) {
    if (!IsLabel(part, IsLowerAlnum)) {
      return "must be lowercase letters, digits, '-' and '.', each '.'-separated part starting "
             "and ending with a letter or digit (a DNS-1123 subdomain)";
    }
  }
  return "";
}

std::string ShownName(absl::string_view name) {
  if (name.size() > kMaxDnsSubdomainLength) return absl::StrCat("(", name.size(), " characters)");
  return absl::StrCat("\"", Printable(name), "\"");
}

bool IsDns1035Label(absl::string_view name, size_t max_length) {
  return name.size() <= max_length &&
         IsLabel(name, [](char c) { return static_cast<bool>(absl::ascii_islower(c)); });
}

}  // namespace phalanx
