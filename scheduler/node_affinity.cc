#include "scheduler/node_affinity.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>

#include "absl/strings/str_cat.h"

namespace phalanx::placement {
namespace {

// As Go's strconv.ParseInt(s, 10, 64), which labels.Requirement uses for Gt and Lt: an optional
// sign, then decimal digits, nothing else.
std::optional<int64_t> ParseInteger(std::string_view text) {
  const bool plus = !text.empty() && text.front() == '+';
  if (plus) text.remove_prefix(1);
  if (text.empty() || (plus && text.front() == '-')) return std::nullopt;
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [at, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || at != end) return std::nullopt;
  return value;
}

bool Contains(const std::vector<std::string>& values, std::string_view value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

absl::Status Invalid(const std::string& field, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", std::string(why)));
}

absl::Status ValidateExpression(const NodeSelectorRequirement& r, const std::string& field) {
  if (r.key.empty()) return Invalid(field + ".key", "must not be empty");
  const std::string values = field + ".values";
  if (r.op == "In" || r.op == "NotIn") {
    if (r.values.empty()) return Invalid(values, "must be specified for In and NotIn");
  } else if (r.op == "Exists" || r.op == "DoesNotExist") {
    if (!r.values.empty()) return Invalid(values, "must be empty for Exists and DoesNotExist");
  } else if (r.op == "Gt" || r.op == "Lt") {
    if (r.values.size() != 1 || !ParseInteger(r.values[0])) {
      return Invalid(values, "for Gt and Lt, exactly one integer value");
    }
  } else {
    return Invalid(field + ".operator",
                   absl::StrCat("unsupported value \"", r.op,
                                "\": want In, NotIn, Exists, DoesNotExist, Gt or Lt"));
  }
  return absl::OkStatus();
}

absl::Status ValidateField(const NodeSelectorRequirement& r, const std::string& field) {
  if (r.key != kNodeNameField) {
    return Invalid(field + ".key", absl::StrCat("\"", r.key, "\": only ",
                                                std::string(kNodeNameField), " is supported"));
  }
  if (r.op != "In" && r.op != "NotIn") {
    return Invalid(field + ".operator",
                   absl::StrCat("unsupported value \"", r.op, "\": want In or NotIn"));
  }
  if (r.values.size() != 1) return Invalid(field + ".values", "must have one element");
  return absl::OkStatus();
}

bool MatchesTerm(const NodeSelectorTerm& term, const std::map<std::string, std::string>& labels,
                 std::string_view node_name) {
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  for (const NodeSelectorRequirement& r : term.match_expressions) {
    auto it = labels.find(r.key);
    if (!MatchesRequirement(r, it == labels.end() ? nullptr : &it->second)) return false;
  }
  for (const NodeSelectorRequirement& r : term.match_fields) {
    if ((r.values[0] == node_name) != (r.op == "In")) return false;
  }
  return true;
}

void AppendRequirements(const std::vector<NodeSelectorRequirement>& list, std::string* key) {
  for (const NodeSelectorRequirement& r : list) {
    absl::StrAppend(key, r.key.size(), ":", r.key, r.op, "(", r.values.size());
    for (const std::string& v : r.values) absl::StrAppend(key, ",", v.size(), ":", v);
    key->push_back(')');
  }
}

}  // namespace

absl::Status ValidateNodeAffinity(const std::vector<NodeSelectorTerm>& terms,
                                  std::string_view field) {
  for (size_t t = 0; t < terms.size(); ++t) {
    const std::string term = absl::StrCat(std::string(field), "[", t, "]");
    for (size_t i = 0; i < terms[t].match_expressions.size(); ++i) {
      const absl::Status status = ValidateExpression(
          terms[t].match_expressions[i], absl::StrCat(term, ".matchExpressions[", i, "]"));
      if (!status.ok()) return status;
    }
    for (size_t i = 0; i < terms[t].match_fields.size(); ++i) {
      const absl::Status status =
          ValidateField(terms[t].match_fields[i], absl::StrCat(term, ".matchFields[", i, "]"));
      if (!status.ok()) return status;
    }
  }
  return absl::OkStatus();
}

bool MatchesRequirement(const NodeSelectorRequirement& requirement, const std::string* value) {
  const std::string& op = requirement.op;
  if (op == "In") return value != nullptr && Contains(requirement.values, *value);
  if (op == "NotIn") return value == nullptr || !Contains(requirement.values, *value);
  if (op == "Exists") return value != nullptr;
  if (op == "DoesNotExist") return value == nullptr;
  if ((op != "Gt" && op != "Lt") || value == nullptr || requirement.values.size() != 1) {
    return false;
  }
  const std::optional<int64_t> have = ParseInteger(*value);
  const std::optional<int64_t> bound = ParseInteger(requirement.values[0]);
  if (!have || !bound) return false;
  return op == "Gt" ? *have > *bound : *have < *bound;
}

bool MatchesNodeAffinity(const std::vector<NodeSelectorTerm>& terms,
                         const std::map<std::string, std::string>& labels,
                         std::string_view node_name) {
  if (terms.empty()) return true;
  return std::any_of(terms.begin(), terms.end(), [&](const NodeSelectorTerm& term) {
    return MatchesTerm(term, labels, node_name);
  });
}

void AppendAffinityKey(const std::vector<NodeSelectorTerm>& terms, std::string* key) {
  for (const NodeSelectorTerm& term : terms) {
    key->append("term[");
    AppendRequirements(term.match_expressions, key);
    key->append("|");
    AppendRequirements(term.match_fields, key);
    key->append("]");
  }
}

}  // namespace phalanx::placement
