// Reading the text files users hand to the CLI (a TrainingJob, a cluster spec, a trace), and
// quoting user-supplied text in messages, so that every way a file or value can be wrong gets
// its own exact message and nothing a user typed or wrote can put raw control bytes on a
// terminal.
//
//   ASSIGN_OR_RETURN(std::string text, ReadInputFile(path));
//   // InvalidArgument "job.yaml: is a directory", "job.yaml: permission denied",
//   //   "job.yaml:3: binary file: NUL byte at offset 40; want UTF-8 text", ...
//   std::string shown = Printable(value);  // "\x1b[31m" for ESC [ 3 1 m
#pragma once

#include <cstddef>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace phalanx {

// `text` with every byte that is not printable text escaped as \xHH: C0 controls (newline and
// tab included), DEL, UTF-8-encoded C1 controls (U+0080..U+009F, which terminals also act on) and
// bytes that are not valid UTF-8. Everything else, valid multi-byte UTF-8 included, is kept.
std::string Printable(absl::string_view text);

// Printable() line by line: newlines are kept, everything else is escaped. For whole messages
// whose lines were put together on purpose.
std::string PrintableLines(absl::string_view text);

// The file system as ReadInputFile sees it; tests substitute one whose reads fail (the suite
// runs as root, which no permission bit stops).
class FileReader {
 public:
  virtual ~FileReader() = default;
  // Reads at most `max_bytes` bytes of the file at `path` into `contents`. Returns 0, or the
  // errno of the failing call: ENOENT, EACCES, EISDIR (a directory), ...
  virtual int Read(const std::string& path, size_t max_bytes, std::string* contents) const = 0;
};

// open(2) and read(2).
const FileReader& RealFiles();

// Standard input, whatever the path: for a file argument "-", which commands read as kubectl
// reads `-f -`. Messages then name it kStandardInputName (pass it as the path).
const FileReader& StandardInput();
inline constexpr char kStandardInputName[] = "<stdin>";

// Input files larger than this are refused: no job, cluster or trace comes near it, and
// /dev/zero would otherwise be read forever.
inline constexpr size_t kMaxInputFileBytes = size_t{256} << 20;

// The whole file, which must be UTF-8 text. InvalidArgument otherwise, naming the path
// (escaped) and one of: "no such file or directory", "is a directory", "permission denied",
// "cannot read: <strerror>", "larger than <max_bytes> bytes", "<line>: binary file: NUL byte at
// offset N; want UTF-8 text", "<line>: not UTF-8 text: byte 0xHH at offset N".
absl::StatusOr<std::string> ReadInputFile(const std::string& path,
                                          const FileReader& files = RealFiles(),
                                          size_t max_bytes = kMaxInputFileBytes);

}  // namespace phalanx
