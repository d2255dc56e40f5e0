// CSV both ways, as RFC 4180 quotes it: the trace reader (sim/trace.h) and `--jobs-out`
// (sim/report.h) share this file, so that a field `--jobs-out` writes reads back as it was.
//
//   out << CsvField("a,b");  // "a,b" in quotes
//   ASSIGN_OR_RETURN(std::vector<CsvRecord> records, ReadCsv(text, "t.csv"));
//   // error: "t.csv:3: cell 2: its opening '"' is never closed (...)"
//
// Reading: a cell may be quoted, holding commas, line breaks and quotes written twice (""). An
// unquoted cell, and the space around a quoted one, loses its surrounding blanks (CRLF line ends
// included); a quote inside an unquoted cell, or text after a closing quote, is refused. Blank
// lines are left out; a line whose first non-blank character is '#' is a comment, returned as
// such so that the caller can tell one from a row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace phalanx::sim {

// `text` as one CSV field: quoted, its quotes doubled, when it holds a comma, a quote or a line
// break, starts or ends with a blank, or starts with '#' (which ReadCsv would otherwise read
// differently); as it is otherwise.
std::string CsvField(absl::string_view text);

struct CsvRecord {
  int64_t line = 0;  // 1-based line of its first character
  std::vector<std::string> cells;
  // A whole-line comment; `cells` are then what the line would hold as a row (if it reads as
  // one on its own, else its text split at every comma).
  bool comment = false;
};

// Every record of `text` (a UTF-8 byte order mark before the first is dropped). InvalidArgument
// "<source>:<line>: cell <n>: ..." for a quote out of place.
absl::StatusOr<std::vector<CsvRecord>> ReadCsv(absl::string_view text, const std::string& source);

}  // namespace phalanx::sim
