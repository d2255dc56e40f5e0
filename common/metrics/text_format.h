// Pieces of the Prometheus text exposition format 0.0.4 that Registry::Render is built from,
// kept apart so tests can pin each rule down on its own:
// https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format
//
//   std::string out;
//   AppendSampleLine("x_bucket", {"verb"}, {"filter"}, "le", "0.5", 3, &out);
//   // out == "x_bucket{verb=\"filter\",le=\"0.5\"} 3\n"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::metrics::internal {

// A sample value as Prometheus parses it: shortest round-trip decimal ("0.0004", "3", "1e+21"),
// "+Inf", "-Inf" or "NaN".
void AppendValue(double value, std::string* out);

// Label values escape backslash, double quote and newline; HELP text escapes backslash and
// newline only (the format's two different rules).
void AppendEscapedLabelValue(std::string_view value, std::string* out);
void AppendEscapedHelp(std::string_view help, std::string* out);

// "# HELP name help\n# TYPE name type\n".
void AppendHeader(std::string_view name, std::string_view help, std::string_view type,
                  std::string* out);

// `name{l1="v1",...,extra_name="extra_value"} value\n`; no braces when there are no labels.
// `extra_name` empty means no extra label (it carries a histogram's le).
void AppendSampleLine(std::string_view name, const std::vector<std::string>& label_names,
                      const std::vector<std::string>& label_values, std::string_view extra_name,
                      std::string_view extra_value, double value, std::string* out);
void AppendSampleLine(std::string_view name, const std::vector<std::string>& label_names,
                      const std::vector<std::string>& label_values, std::string_view extra_name,
                      std::string_view extra_value, uint64_t value, std::string* out);

// Registration errors are programming errors (names are fixed in the source): print `message`
// to stderr and abort, so a bad metric is caught by the first test or start-up that runs it.
[[noreturn]] void FailRegistration(std::string_view message);

}  // namespace phalanx::metrics::internal
