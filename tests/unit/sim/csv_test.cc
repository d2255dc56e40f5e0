#include "sim/csv.h"

#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phalanx::sim {
namespace {

using ::phalanx::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// RFC 4180: a quoted cell holds commas, line breaks and doubled quotes; blanks around a cell go,
// inside quotes they stay; each record knows the line it starts on.
TEST(CsvTest, QuotedCellsHoldCommasQuotesAndLineBreaks) {
  ASSERT_OK_AND_ASSIGN(std::vector<CsvRecord> records,
                       ReadCsv("a, \"b,c\" ,\"say \"\"hi\"\"\", d \r\n"
                               "\n"
                               "\"two\nlines\",\" x \"\n"
                               "last,\n",
                               "t.csv"));
  ASSERT_EQ(records.size(), 3u);
  EXPECT_THAT(records[0].cells, ElementsAre("a", "b,c", "say \"hi\"", "d"));
  EXPECT_EQ(records[0].line, 1);
  EXPECT_THAT(records[1].cells, ElementsAre("two\nlines", " x "));
  EXPECT_EQ(records[1].line, 3);
  EXPECT_THAT(records[2].cells, ElementsAre("last", ""));
  EXPECT_EQ(records[2].line, 5);
  EXPECT_FALSE(records[2].comment);
}

// What --jobs-out writes, the trace reader reads back unchanged, whatever the text.
TEST(CsvTest, EveryFieldCsvFieldWritesReadsBackAsItWas) {
  const std::vector<std::string> fields = {
      "plain",      "a,b",      "say \"hi\"", " lead", "trail\t", "#not-a-comment",
      "two\nlines", "cr\r\nlf", "",           "\"",    "x\ay",    "ünïcode"};
  std::vector<std::string> written;
  for (const std::string& f : fields) written.push_back(CsvField(f));
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  // Each field alone in the first cell of a record, and all of them in one record.
  for (const std::string& f : written) {
    ASSERT_OK_AND_ASSIGN(std::vector<CsvRecord> records, ReadCsv(f + ",end\n", "t.csv"));
    ASSERT_EQ(records.size(), 1u) << f;
    EXPECT_FALSE(records[0].comment) << f;
    EXPECT_EQ(records[0].cells.size(), 2u) << f;
  }
  ASSERT_OK_AND_ASSIGN(std::vector<CsvRecord> records,
                       ReadCsv(absl::StrJoin(written, ",") + "\n", "t.csv"));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].cells, fields);
}

TEST(CsvTest, AQuoteOutOfPlaceNamesItsLineAndCell) {
  EXPECT_THAT(ReadCsv("a,b\n1,\"open\n2,3\n", "t.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("t.csv:2: cell 2: its opening '\"' is never closed")));
  EXPECT_THAT(ReadCsv("a,b\n\"x\"y,1\n", "t.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("t.csv:2: cell 1: want ',' after its closing '\"', got \"y\"")));
  EXPECT_THAT(ReadCsv("a,b\nx,b\"c\n", "t.csv"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("t.csv:2: cell 2: a '\"' inside an unquoted cell (\"b\"c\")")));
}

// A comment is one line whatever quotes it holds; its cells are what the line holds as a row, so
// that the trace reader can refuse a "#" line that may be a job.
TEST(CsvTest, CommentsAreSingleLinesWithTheirRowCells) {
  ASSERT_OK_AND_ASSIGN(std::vector<CsvRecord> records,
                       ReadCsv("\xEF\xBB\xBF# an \"open quote\n  #x,\"a,b\",c\nname,q\n", "t"));
  ASSERT_EQ(records.size(), 3u);
  EXPECT_TRUE(records[0].comment);
  EXPECT_EQ(records[0].line, 1);
  EXPECT_TRUE(records[1].comment);
  EXPECT_THAT(records[1].cells, ElementsAre("#x", "a,b", "c"));
  EXPECT_THAT(records[2].cells, ElementsAre("name", "q"));
  EXPECT_EQ(records[2].line, 3);
}

}  // namespace
}  // namespace phalanx::sim
