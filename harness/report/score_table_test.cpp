#include "harness/report/score_table.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace gauntlet::harness {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(ScoreTable, ColumnsStayAlignedUnderTheLongestName) {
  const std::string long_name = "exec:python3 -m gauntlet_detector.examples.throttle --ratio 0.1";
  DetectorScore score;
  score.alerts = 3;
  const std::map<std::string, DetectorScore> scores = {{"timeout", score}, {long_name, score}};
  const auto lines = lines_of(score_table({"timeout", long_name}, scores, {}));
  ASSERT_GE(lines.size(), 3u);
  // Each row's alerts figure ends where the header's "alerts" ends.
  const std::size_t alerts_end = lines[0].find("alerts") + 6;
  EXPECT_EQ(lines[1].rfind('3', alerts_end - 1), alerts_end - 1) << lines[1];
  EXPECT_EQ(lines[2].rfind('3', alerts_end - 1), alerts_end - 1) << lines[2];
  EXPECT_EQ(lines[2].substr(0, long_name.size()), long_name);
}

TEST(ScoreTable, ShortNamesKeepTheFourteenWideColumn) {
  const std::map<std::string, DetectorScore> scores = {{"falcon", DetectorScore{}}};
  const auto lines = lines_of(score_table({"falcon"}, scores, {}));
  EXPECT_EQ(lines[0].substr(0, 21), "detector       alerts");
}

}  // namespace
}  // namespace gauntlet::harness
