#include "common/metrics/text_format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>

#include "fmt/format.h"

namespace phalanx::metrics::internal {

void AppendValue(double value, std::string* out) {
  if (std::isnan(value)) {
    out->append("NaN");
  } else if (std::isinf(value)) {
    out->append(value > 0 ? "+Inf" : "-Inf");
  } else {
    // fmt's default is the shortest string that reads back as the same double.
    fmt::format_to(std::back_inserter(*out), "{}", value);
  }
}

namespace {

// The format's two escaping rules differ only in whether a double quote is escaped.
void AppendEscaped(std::string_view text, bool escape_quote, std::string* out) {
  for (char c : text) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == '\n') {
      out->append("\\n");
    } else if (c == '"' && escape_quote) {
      out->append("\\\"");
    } else {
      out->push_back(c);
    }
  }
}

}  // namespace

void AppendEscapedLabelValue(std::string_view value, std::string* out) {
  AppendEscaped(value, /*escape_quote=*/true, out);
}

void AppendEscapedHelp(std::string_view help, std::string* out) {
  AppendEscaped(help, /*escape_quote=*/false, out);
}

void AppendHeader(std::string_view name, std::string_view help, std::string_view type,
                  std::string* out) {
  out->append("# HELP ").append(name).push_back(' ');
  AppendEscapedHelp(help, out);
  out->append("\n# TYPE ").append(name).push_back(' ');
  out->append(type).push_back('\n');
}

namespace {

void AppendNameAndLabels(std::string_view name, const std::vector<std::string>& label_names,
                         const std::vector<std::string>& label_values,
                         std::string_view extra_name, std::string_view extra_value,
                         std::string* out) {
  out->append(name);
  if (label_names.empty() && extra_name.empty()) return;
  out->push_back('{');
  bool first = true;
  auto label = [&](std::string_view label_name, std::string_view label_value) {
    if (!first) out->push_back(',');
    first = false;
    out->append(label_name).append("=\"");
    AppendEscapedLabelValue(label_value, out);
    out->push_back('"');
  };
  for (size_t i = 0; i < label_names.size(); ++i) label(label_names[i], label_values[i]);
  if (!extra_name.empty()) label(extra_name, extra_value);
  out->push_back('}');
}

}  // namespace

void AppendSampleLine(std::string_view name, const std::vector<std::string>& label_names,
                      const std::vector<std::string>& label_values, std::string_view extra_name,
                      std::string_view extra_value, double value, std::string* out) {
  AppendNameAndLabels(name, label_names, label_values, extra_name, extra_value, out);
  out->push_back(' ');
  AppendValue(value, out);
  out->push_back('\n');
}

void AppendSampleLine(std::string_view name, const std::vector<std::string>& label_names,
                      const std::vector<std::string>& label_values, std::string_view extra_name,
                      std::string_view extra_value, uint64_t value, std::string* out) {
  AppendNameAndLabels(name, label_names, label_values, extra_name, extra_value, out);
  out->push_back(' ');
  fmt::format_to(std::back_inserter(*out), "{}", value);
  out->push_back('\n');
}

void FailRegistration(std::string_view message) {
  std::fprintf(stderr, "phalanx metrics: %.*s\n", static_cast<int>(message.size()),
               message.data());
  std::fflush(stderr);
  std::abort();
}

}  // namespace phalanx::metrics::internal
