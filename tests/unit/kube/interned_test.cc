#include "kube/interned.h"

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/objects.h"

namespace kube {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

TEST(InternedStringTest, BehavesLikeAString) {
  InternedString s = "nvidia.com/gpu";
  EXPECT_EQ(s, "nvidia.com/gpu");
  EXPECT_EQ("nvidia.com/gpu", s);
  EXPECT_EQ(s, std::string("nvidia.com/gpu"));
  EXPECT_NE(s, std::string_view("nvidia.com"));
  EXPECT_LT(s, InternedString("vpc.amazonaws.com/efa"));
  EXPECT_EQ(s.size(), 14u);
  std::string copy = s;
  EXPECT_EQ(copy, "nvidia.com/gpu");
  copy = s;  // assignment to a std::string too
  EXPECT_EQ(copy, s.str());
  EXPECT_EQ(fmt::format("[{}]", s), "[nvidia.com/gpu]");
  EXPECT_EQ(::testing::PrintToString(s), "nvidia.com/gpu");

  InternedString empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty, "");
  EXPECT_EQ(empty.str(), "");
  s.clear();
  EXPECT_EQ(s, empty);
}

TEST(StringPoolTest, OneCopyPerDistinctText) {
  StringPool pool;
  InternedString a = pool.Intern("team-a");
  InternedString b = pool.Intern(std::string("team-") + "a");
  EXPECT_EQ(&a.str(), &b.str());  // the same storage
  EXPECT_NE(&a.str(), &pool.Intern("team-b").str());
  EXPECT_TRUE(pool.Intern("").empty());
  EXPECT_EQ(pool.size(), 2u);
}

TEST(StringPoolTest, SweepDropsOnlyWhatNobodyHolds) {
  StringPool pool;
  std::vector<InternedString> kept;
  for (int i = 0; i < 100; ++i) kept.push_back(pool.Intern("kept-" + std::to_string(i)));
  for (int i = 0; i < 1000; ++i) pool.Intern("dropped-" + std::to_string(i));  // not held
  EXPECT_EQ(pool.size(), 1100u);
  pool.Sweep();
  EXPECT_EQ(pool.size(), 100u);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(kept[i], "kept-" + std::to_string(i));
    EXPECT_EQ(&kept[i].str(), &pool.Intern("kept-" + std::to_string(i)).str());
  }
}

TEST(StringPoolTest, StaysBoundedByWhatIsLive) {
  // A churning cache: each round interns new texts and drops the previous round's. The pool
  // sweeps whenever it reaches twice what was live at its last sweep (at least 4,096 strings);
  // with at most 2,000 live here it never holds more than 4,096.
  StringPool pool;
  std::vector<InternedString> live;
  size_t largest = 0;
  for (int round = 0; round < 50; ++round) {
    std::vector<InternedString> next;
    for (int i = 0; i < 1000; ++i) {
      next.push_back(pool.Intern("pod-" + std::to_string(round) + "-" + std::to_string(i)));
    }
    live = std::move(next);
    largest = std::max(largest, pool.size());
  }
  EXPECT_LE(largest, 4096u);
  EXPECT_GE(largest, 2000u);
  EXPECT_EQ(live.back(), "pod-49-999");
}

TEST(StringPoolTest, StringsOutliveThePool) {
  InternedString s;
  {
    StringPool pool;
    s = pool.Intern("ip-10-1-4-17.ec2.internal");
  }
  EXPECT_EQ(s, "ip-10-1-4-17.ec2.internal");
}

TEST(StringPoolTest, HandlesMayBeCopiedAndDroppedOnOtherThreadsWhileThePoolSweeps) {
  StringPool pool;
  std::vector<InternedString> shared;
  for (int i = 0; i < 64; ++i) shared.push_back(pool.Intern("node-" + std::to_string(i)));
  std::vector<std::thread> readers;
  std::vector<size_t> seen(4, 0);
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&, t] {
      for (int round = 0; round < 2000; ++round) {
        std::vector<InternedString> copies(shared.begin(), shared.end());
        for (const InternedString& c : copies) seen[t] += c.size();
      }
    });
  }
  for (int i = 0; i < 20000; ++i) pool.Intern("churn-" + std::to_string(i));  // sweeps
  for (std::thread& r : readers) r.join();
  for (int i = 0; i < 64; ++i) EXPECT_EQ(shared[i], "node-" + std::to_string(i));
  size_t per_round = 0;
  for (const InternedString& s : shared) per_round += s.size();
  for (size_t total : seen) EXPECT_EQ(total, per_round * 2000);
}

TEST(SharedListTest, ReadsLikeAVectorAndCopiesShare) {
  SharedList<InternedString> list = std::vector<InternedString>{"a", "b", "c"};
  EXPECT_EQ(list.size(), 3u);
  EXPECT_EQ(list[1], "b");
  EXPECT_THAT(list, ElementsAre("a", "b", "c"));
  SharedList<InternedString> copy = list;
  EXPECT_EQ(&copy[0], &list[0]);
  EXPECT_EQ(copy, (SharedList<InternedString>{"a", "b", "c"}));  // equal by content too
  EXPECT_NE(copy, (SharedList<InternedString>{"a", "b"}));
  SharedList<InternedString> none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.begin(), none.end());
  list = none;
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(copy.back(), "c");  // the copy keeps the block alive
}

TEST(SharedTest, ReadsLikeTheContainerAndConvertsToIt) {
  Shared<std::map<std::string, int64_t, std::less<>>> requests = {{"cpu", 4000}, {"memory", 8}};
  EXPECT_THAT(requests, ElementsAre(Pair("cpu", 4000), Pair("memory", 8)));
  EXPECT_TRUE(requests.contains("cpu"));
  EXPECT_FALSE(requests.contains("nvidia.com/gpu"));
  EXPECT_EQ(requests.at("memory"), 8);
  std::map<std::string, int64_t, std::less<>> copy;
  copy = requests;
  EXPECT_EQ(copy.size(), 2u);
  Shared<std::map<std::string, int64_t, std::less<>>> empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.size(), 0u);
}

TEST(StringMapTest, SortsAndKeepsTheLastOfRepeatedKeys) {
  std::vector<StringMap::Entry> entries = {{"z", "1"}, {"a", "2"}, {"z", "3"}, {"m", "4"}};
  StringMap map(std::move(entries));
  EXPECT_TRUE(entries.empty());
  std::vector<std::pair<std::string, std::string>> got(map.begin(), map.end());
  EXPECT_THAT(got, ElementsAre(Pair("a", "2"), Pair("m", "4"), Pair("z", "3")));
  ASSERT_NE(map.Find("z"), nullptr);
  EXPECT_EQ(*map.Find("z"), "3");
  EXPECT_EQ(map.Find("b"), nullptr);
}

TEST(StringMapTest, SetCopiesOnWrite) {
  StringMap a;
  a.Set("phalanx.dev/job", "llama");
  StringMap b = a;  // shares a's entries
  b.Set("phalanx.dev/rank", "3");
  b.Set("phalanx.dev/job", "mistral");
  EXPECT_EQ(a.size(), 1u);
  EXPECT_EQ(*a.Find("phalanx.dev/job"), "llama");
  EXPECT_EQ(b.size(), 2u);
  EXPECT_EQ(*b.Find("phalanx.dev/job"), "mistral");
  EXPECT_NE(a, b);
  b.Set("phalanx.dev/job", "llama");
  EXPECT_NE(a, b);
  EXPECT_EQ(a, StringMap(std::vector<StringMap::Entry>{{"phalanx.dev/job", "llama"}}));
}

}  // namespace
}  // namespace kube
