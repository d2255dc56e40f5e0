// "1 job", "3 jobs": a count with its noun in the number English wants, for messages a user
// reads ("1 jobs" read as a bug in the tool).
//
//   absl::StrCat("trace: t.csv, ", CountedNoun(jobs, "job"));
#pragma once

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace phalanx {

// Regular plurals only (an "s" appended): the nouns our messages count are.
inline std::string CountedNoun(int64_t count, absl::string_view noun) {
  return absl::StrCat(count, " ", noun, count == 1 ? "" : "s");
}

}  // namespace phalanx
