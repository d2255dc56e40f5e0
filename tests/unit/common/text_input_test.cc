#include "common/text_input.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phalanx {
namespace {

using ::phalanx::testing::StatusIs;

// The file's text, or the error's message prefixed with "error: ".
std::string TextOf(const absl::StatusOr<std::string>& text) {
  return text.ok() ? *text : "error: " + std::string(text.status().message());
}

TEST(PrintableTest, EscapesControlBytesAndInvalidUtf8KeepsText) {
  EXPECT_EQ(Printable("plain text, ünïcödé, 中文"), "plain text, ünïcödé, 中文");
  EXPECT_EQ(Printable("\x1b[31mred"), "\\x1b[31mred");
  EXPECT_EQ(Printable("a\nb\tc\rd\x7f"), "a\\x0ab\\x09c\\x0dd\\x7f");
  EXPECT_EQ(Printable("C1 \xc2\x9b here"), "C1 \\xc2\\x9b here");  // U+009B, a one-byte CSI
  EXPECT_EQ(Printable("latin-1 \xe9t\xe9"), "latin-1 \\xe9t\\xe9");
  EXPECT_EQ(Printable("overlong \xc0\xaf"), "overlong \\xc0\\xaf");
  EXPECT_EQ(Printable(std::string("nul\0!", 5)), "nul\\x00!");
  EXPECT_EQ(PrintableLines("line 1\nline \x1b 2\n"), "line 1\nline \\x1b 2\n");
  // Escaping escaped text changes nothing: messages may be escaped twice.
  EXPECT_EQ(Printable(Printable("\x1b")), "\\x1b");
}

// Fails every read with one errno, as a file system would for a file root cannot read
// either (the suite runs as root, which permission bits do not stop).
class FailingFiles : public FileReader {
 public:
  explicit FailingFiles(int error) : error_(error) {}
  int Read(const std::string&, size_t, std::string*) const override { return error_; }

 private:
  int error_;
};

class ReadInputFileTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/text_input_test";
    std::filesystem::create_directories(dir_);
  }
  std::string dir_;
};

TEST_F(ReadInputFileTest, ReadsUtf8Text) {
  EXPECT_EQ(TextOf(ReadInputFile(Write("ok.yaml", "name: ünï\n"))), std::string("name: ünï\n"));
  EXPECT_EQ(TextOf(ReadInputFile(Write("empty.yaml", ""))), std::string());
}

// Standard input goes through the same checks, named as the caller names it.
TEST_F(ReadInputFileTest, StandardInputIsReadWhateverThePath) {
  const int saved = dup(STDIN_FILENO);
  ASSERT_GE(saved, 0);
  auto read_as_stdin = [&](const std::string& text) {
    const std::string path = Write("stdin.txt", text);
    const int fd = open(path.c_str(), O_RDONLY);
    EXPECT_GE(fd, 0);
    dup2(fd, STDIN_FILENO);
    close(fd);
    const std::string read = TextOf(ReadInputFile(kStandardInputName, StandardInput()));
    dup2(saved, STDIN_FILENO);
    return read;
  };
  EXPECT_EQ(read_as_stdin("kind: TrainingJob\n"), "kind: TrainingJob\n");
  EXPECT_EQ(read_as_stdin(std::string("a\nb\0", 4)),
            "error: <stdin>:2: binary file: NUL byte at offset 3; want UTF-8 text");
  close(saved);
}

TEST_F(ReadInputFileTest, EachProblemHasItsOwnMessage) {
  const auto invalid = [](const std::string& message) {
    return StatusIs(absl::StatusCode::kInvalidArgument, message);
  };
  EXPECT_THAT(ReadInputFile(dir_), invalid(dir_ + ": is a directory"));
  EXPECT_THAT(ReadInputFile(dir_ + "/missing.yaml"),
              invalid(dir_ + "/missing.yaml: no such file or directory"));
  const std::string link = dir_ + "/dangling.yaml";
  std::filesystem::remove(link);
  std::filesystem::create_symlink(dir_ + "/nowhere", link);
  EXPECT_THAT(ReadInputFile(link), invalid(link + ": no such file or directory"));
  EXPECT_THAT(ReadInputFile("job.yaml", FailingFiles(EACCES)),
              invalid("job.yaml: permission denied"));
  EXPECT_THAT(ReadInputFile("job.yaml", FailingFiles(EIO)),
              invalid("job.yaml: cannot read: Input/output error"));
  const std::string binary = Write("binary.yaml", std::string("a: 1\nb: \0\x01\x02", 11));
  EXPECT_THAT(ReadInputFile(binary),
              invalid(binary + ":2: binary file: NUL byte at offset 8; want UTF-8 text"));
  const std::string latin1 = Write("latin1.yaml", "a: 1\n\nname: caf\xe9\n");
  EXPECT_THAT(ReadInputFile(latin1), invalid(latin1 + ":3: not UTF-8 text: byte 0xe9 at offset 15"));
  EXPECT_THAT(ReadInputFile(Write("big.yaml", std::string(11, 'x')), RealFiles(), 10),
              invalid(dir_ + "/big.yaml: larger than 10 bytes"));
  EXPECT_EQ(TextOf(ReadInputFile(Write("ten.yaml", std::string(10, 'x')), RealFiles(), 10)), std::string(10, 'x'));
  // A path with control bytes is escaped in the message.
  EXPECT_THAT(ReadInputFile(dir_ + "/\x1b[2J.yaml"),
              invalid(dir_ + "/\\x1b[2J.yaml: no such file or directory"));
  EXPECT_THAT(ReadInputFile(""), invalid("empty file name"));
}

}  // namespace
}  // namespace phalanx
