#include "sim/csv.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/text_input.h"

namespace phalanx::sim {
namespace {

// The white space a cell loses around it: absl's, without the line break that ends a record.
bool IsBlank(char c) { return c != '\n' && absl::ascii_isspace(static_cast<unsigned char>(c)); }

struct ParsedRecord {
  std::vector<std::string> cells;
  size_t end = 0;      // just past the record's line break (or the end of the text)
  int64_t breaks = 0;  // line breaks inside its quoted cells
  std::string error;   // "cell <n>: ..." when it does not parse
};

// The record starting at text[pos]. A quoted cell may span lines only if `multiline`.
ParsedRecord ParseRecord(absl::string_view text, size_t pos, bool multiline) {
  ParsedRecord out;
  auto fail = [&](const std::string& why) {
    out.error = absl::StrCat("cell ", out.cells.size() + 1, ": ", why);
    return out;
  };
  while (true) {
    while (pos < text.size() && IsBlank(text[pos])) ++pos;
    std::string cell;
    if (pos < text.size() && text[pos] == '"') {
      bool closed = false;
      for (++pos; pos < text.size() && !closed; ++pos) {
        const char c = text[pos];
        if (c == '"' && pos + 1 < text.size() && text[pos + 1] == '"') {
          cell += '"';
          ++pos;
        } else if (c == '"') {
          closed = true;
        } else if (c == '\n' && !multiline) {
          break;
        } else {
          out.breaks += c == '\n';
          cell += c;
        }
      }
      if (!closed) {
        return fail(
            "its opening '\"' is never closed (a '\"' inside a quoted cell is written "
            "twice: \"\")");
      }
      while (pos < text.size() && IsBlank(text[pos])) ++pos;
      if (pos < text.size() && text[pos] != ',' && text[pos] != '\n') {
        const size_t stop = text.find_first_of(",\n", pos);
        return fail(absl::StrCat("want ',' after its closing '\"', got \"",
                                 Printable(text.substr(pos, stop - pos)), "\""));
      }
    } else {
      const size_t begin = pos;
      pos = std::min(text.find_first_of(",\n", pos), text.size());
      const absl::string_view raw = text.substr(begin, pos - begin);
      if (raw.find('"') != absl::string_view::npos) {
        return fail(absl::StrCat("a '\"' inside an unquoted cell (\"", Printable(raw),
                                 "\"): quote the whole cell and write the '\"' twice"));
      }
      cell = std::string(absl::StripAsciiWhitespace(raw));
    }
    out.cells.push_back(std::move(cell));
    if (pos < text.size() && text[pos] == ',') {
      ++pos;
      continue;
    }
    out.end = pos < text.size() ? pos + 1 : pos;
    return out;
  }
}

}  // namespace

std::string CsvField(absl::string_view text) {
  const bool plain =
      text.find_first_of(",\"\r\n") == absl::string_view::npos &&
      (text.empty() || (!IsBlank(text.front()) && !IsBlank(text.back()) && text.front() != '#'));
  if (plain) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

absl::StatusOr<std::vector<CsvRecord>> ReadCsv(absl::string_view text, const std::string& source) {
  // As spreadsheets write one: not part of the first cell.
  absl::ConsumePrefix(&text, "\xEF\xBB\xBF");
  std::vector<CsvRecord> records;
  int64_t line = 1;
  for (size_t pos = 0; pos < text.size();) {
    const size_t eol = std::min(text.find('\n', pos), text.size());
    const absl::string_view raw = text.substr(pos, eol - pos);
    const absl::string_view stripped = absl::StripAsciiWhitespace(raw);
    if (stripped.empty() || stripped.front() == '#') {
      if (!stripped.empty()) {
        CsvRecord& comment = records.emplace_back();
        comment.line = line;
        comment.comment = true;
        ParsedRecord row = ParseRecord(raw, 0, /*multiline=*/false);
        comment.cells = row.error.empty() ? std::move(row.cells)
                                          : std::vector<std::string>(absl::StrSplit(raw, ','));
      }
      pos = eol + 1;
      ++line;
      continue;
    }
    ParsedRecord row = ParseRecord(text, pos, /*multiline=*/true);
    if (!row.error.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(source, ":", line, ": ", row.error));
    }
    records.push_back(CsvRecord{line, std::move(row.cells), false});
    pos = row.end;
    line += row.breaks + 1;
  }
  return records;
}

}  // namespace phalanx::sim
