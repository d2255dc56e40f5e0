#include "common/text_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace phalanx {
namespace {

// Length of the valid UTF-8 sequence starting at text[i] (overlong forms, surrogates and code
// points above U+10FFFF are invalid), or 0; `code_point` is set when valid.
size_t Utf8Length(absl::string_view text, size_t i, uint32_t* code_point) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  size_t length = 0;
  uint32_t cp = 0, min = 0;
  if (lead < 0x80) {
    *code_point = lead;
    return 1;
  } else if ((lead & 0xE0) == 0xC0) {
    length = 2, cp = lead & 0x1F, min = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, cp = lead & 0x0F, min = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, cp = lead & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  *code_point = cp;
  return length;
}

std::string Escape(absl::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    const size_t length = Utf8Length(text, i, &cp);
    const bool control = cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F);
    if (length > 0 && (!control || (keep_newlines && cp == '\n'))) {
      out.append(text.data() + i, length);
      i += length;
      continue;
    }
    // A control character, or one byte that does not start valid UTF-8: escape byte by byte.
    for (size_t k = 0; k < std::max<size_t>(length, 1); ++k) {
      absl::StrAppendFormat(&out, "\\x%02x", static_cast<unsigned char>(text[i + k]));
    }
    i += std::max<size_t>(length, 1);
  }
  return out;
}

// Reads at most `max_bytes` of the open `fd` to its end; 0 or the errno of the failing call.
int ReadDescriptor(int fd, size_t max_bytes, std::string* contents) {
  struct stat st {};
  int error = fstat(fd, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
  char buffer[65536];
  while (error == 0 && contents->size() < max_bytes) {
    const ssize_t n = read(fd, buffer, std::min(sizeof buffer, max_bytes - contents->size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = errno;
    if (n <= 0) break;
    contents->append(buffer, static_cast<size_t>(n));
  }
  return error;
}

class PosixFiles : public FileReader {
 public:
  int Read(const std::string& path, size_t max_bytes, std::string* contents) const override {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    const int error = ReadDescriptor(fd, max_bytes, contents);
    close(fd);
    return error;
  }
};

class StandardInputReader : public FileReader {
 public:
  int Read(const std::string&, size_t max_bytes, std::string* contents) const override {
    return ReadDescriptor(STDIN_FILENO, max_bytes, contents);
  }
};

// 1-based line of byte `offset`.
size_t LineOf(absl::string_view text, size_t offset) {
  return 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + offset, '\n'));
}

}  // namespace

std::string Printable(absl::string_view text) { return Escape(text, false); }

std::string PrintableLines(absl::string_view text) { return Escape(text, true); }

const FileReader& RealFiles() {
  static const PosixFiles files;
  return files;
}

const FileReader& StandardInput() {
  static const StandardInputReader input;
  return input;
}

absl::StatusOr<std::string> ReadInputFile(const std::string& path, const FileReader& files,
                                          size_t max_bytes) {
  const std::string shown = Printable(path);
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(shown, what));
  };
  if (path.empty()) return absl::InvalidArgumentError("empty file name");
  std::string text;
  // One byte over the limit tells "exactly at the limit" from "larger".
  if (const int error = files.Read(path, max_bytes + 1, &text); error != 0) {
    switch (error) {
      case ENOENT:
        return bad(": no such file or directory");
      case EISDIR:
        return bad(": is a directory");
      case EACCES:
      case EPERM:
        return bad(": permission denied");
      default:
        return bad(absl::StrCat(": cannot read: ", std::strerror(error)));
    }
  }
  if (text.size() > max_bytes) return bad(absl::StrCat(": larger than ", max_bytes, " bytes"));
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '\0') {
      return bad(absl::StrCat(":", LineOf(text, i), ": binary file: NUL byte at offset ", i,
                              "; want UTF-8 text"));
    }
    uint32_t cp = 0;
    const size_t length = Utf8Length(text, i, &cp);
    if (length == 0) {
      return bad(absl::StrFormat(":%d: not UTF-8 text: byte 0x%02x at offset %d", LineOf(text, i),
                                 static_cast<unsigned char>(text[i]), i));
    }
    i += length;
  }
  return text;
}

}  // namespace phalanx
