#include "sim/rfc3339.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gauntlet::sim {
namespace {

TEST(Rfc3339, ReadsUtcOffsetsAndFractions) {
  EXPECT_DOUBLE_EQ(*parse_rfc3339("2023-11-14T22:13:20Z"), 1700000000.0);
  EXPECT_DOUBLE_EQ(*parse_rfc3339("2023-11-14t22:13:20z"), 1700000000.0);
  EXPECT_DOUBLE_EQ(*parse_rfc3339("2023-11-14 22:13:20Z"), 1700000000.0);
  EXPECT_DOUBLE_EQ(*parse_rfc3339("2023-11-14T17:13:20.25-05:00"), 1700000000.25);
  EXPECT_DOUBLE_EQ(*parse_rfc3339("2023-11-15T08:13:20.123456789+10:00"), 1700000000.123456789);
  EXPECT_DOUBLE_EQ(*parse_rfc3339("1970-01-01T00:00:00Z"), 0.0);
  EXPECT_DOUBLE_EQ(*parse_rfc3339("1969-12-31T23:59:59Z"), -1.0);
  EXPECT_DOUBLE_EQ(*parse_rfc3339("2000-03-01T00:00:00Z"), 951868800.0);
}

TEST(Rfc3339, KnowsTheCalendar) {
  EXPECT_TRUE(parse_rfc3339("2024-02-29T00:00:00Z"));   // divisible by 4
  EXPECT_FALSE(parse_rfc3339("2023-02-29T00:00:00Z"));  // not a leap year
  EXPECT_FALSE(parse_rfc3339("1900-02-29T00:00:00Z"));  // a century, not a leap year
  EXPECT_TRUE(parse_rfc3339("2000-02-29T00:00:00Z"));   // divisible by 400
  EXPECT_FALSE(parse_rfc3339("2023-02-31T00:00:00Z"));
  EXPECT_FALSE(parse_rfc3339("2023-04-31T00:00:00Z"));
  EXPECT_TRUE(parse_rfc3339("2023-12-31T23:59:60Z"));  // a leap second
  EXPECT_FALSE(parse_rfc3339("2023-13-01T00:00:00Z"));
  EXPECT_FALSE(parse_rfc3339("2023-00-01T00:00:00Z"));
  EXPECT_FALSE(parse_rfc3339("2023-01-00T00:00:00Z"));
  EXPECT_FALSE(parse_rfc3339("2023-01-01T24:00:00Z"));
  EXPECT_FALSE(parse_rfc3339("2023-01-01T00:60:00Z"));
}

TEST(Rfc3339, RefusesOffsetsPastADay) {
  EXPECT_TRUE(parse_rfc3339("2023-11-14T22:13:20+23:59"));
  EXPECT_TRUE(parse_rfc3339("2023-11-14T22:13:20-23:59"));
  EXPECT_FALSE(parse_rfc3339("2023-11-14T22:13:20+99:99"));
  EXPECT_FALSE(parse_rfc3339("2023-11-14T22:13:20+24:00"));
  EXPECT_FALSE(parse_rfc3339("2023-11-14T22:13:20+05:60"));
  EXPECT_FALSE(parse_rfc3339("2023-11-14T22:13:20+0500"));
  EXPECT_FALSE(parse_rfc3339("2023-11-14T22:13:20"));
}

TEST(Rfc3339, BoundsTheFraction) {
  EXPECT_TRUE(parse_rfc3339("2023-11-14T22:13:20.123456789Z"));
  EXPECT_FALSE(parse_rfc3339("2023-11-14T22:13:20.1234567891Z"));
  EXPECT_FALSE(parse_rfc3339("2023-11-14T22:13:20." + std::string(30000, '1') + "Z"));
  EXPECT_FALSE(parse_rfc3339("2023-11-14T22:13:20.Z"));
}

TEST(Rfc3339, RefusesWhatIsNotATime) {
  for (const char* text : {"", "yesterday", "2023-11-14 22:13", "2023-11-14T22:13:2xZ", "+023-11-14T22:13:20Z",
                           "2023/11/14T22:13:20Z", "2023-11-14T22:13:20ZZ", "2023-11-14T22:13:20+05:00 "})
    EXPECT_FALSE(parse_rfc3339(text)) << text;
}

}  // namespace
}  // namespace gauntlet::sim
