#include "sim/time.hpp"

#include <gtest/gtest.h>

namespace gauntlet::sim {
namespace {

TEST(Duration, ParsesEveryUnit) {
  EXPECT_EQ(parse_duration("7ns"), 7);
  EXPECT_EQ(parse_duration("104us"), 104 * kMicrosecond);
  EXPECT_EQ(parse_duration("5ms"), 5 * kMillisecond);
  EXPECT_EQ(parse_duration("7.5s"), 7 * kSecond + 500 * kMillisecond);
  EXPECT_EQ(parse_duration("30m"), 30 * kMinute);
  EXPECT_EQ(parse_duration("18h"), 18 * kHour);
  EXPECT_EQ(parse_duration("30d"), 30 * kDay);
  EXPECT_EQ(parse_duration("0.000000001s"), 1);
  EXPECT_EQ(parse_duration(".5s"), 500 * kMillisecond);
}

TEST(Duration, RejectsMalformedText) {
  for (const char* bad :
       {"", "5", "s", "5sec", "-5s", "5 s", "1.5ns", "0.0000000001s", "1e3s", "5.s5", "99999999999d"}) {
    std::string error;
    EXPECT_FALSE(parse_duration(bad, &error).has_value()) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

TEST(Duration, NothingWrapsAroundAndTheLimitHolds) {
  std::string error;
  // 9223372036.9s is past INT64_MAX ns: it once parsed to a negative value.
  for (const char* bad : {"9223372036.9s", "9223372036s", "106751d", "10001d"}) {
    EXPECT_FALSE(parse_duration(bad, &error).has_value()) << bad;
    EXPECT_NE(error.find("limit"), std::string::npos) << error;
  }
  EXPECT_EQ(parse_duration("10000d"), kMaxDuration);
  EXPECT_EQ(saturating_add(INT64_MAX - 1, 5), INT64_MAX);
  EXPECT_EQ(saturating_add(INT64_MIN + 1, -5), INT64_MIN);
  EXPECT_EQ(saturating_add(3, 4), 7);
  EXPECT_EQ(from_seconds(1e300), INT64_MAX);
  EXPECT_EQ(from_seconds(-1e300), INT64_MIN);
}

TEST(Duration, FormatRoundTrips) {
  for (Nanos v : {Nanos{0}, Nanos{1}, 999 * kNanosecond, 104 * kMicrosecond, 1500 * kMillisecond, 30 * kMinute,
                  25 * kHour, 30 * kDay, kDay + 1})
    EXPECT_EQ(parse_duration(format_duration(v)), v) << format_duration(v);
  EXPECT_EQ(format_duration(30 * kMinute), "30m");
  EXPECT_EQ(format_duration(1500 * kMillisecond), "1500ms");
}

TEST(Duration, SecondsConversionRoundsToNearestNanosecond) {
  EXPECT_EQ(from_seconds(1.0000000004), kSecond);
  EXPECT_EQ(from_seconds(2.5e-9), 3);
  EXPECT_DOUBLE_EQ(to_seconds(1500 * kMillisecond), 1.5);
}

}  // namespace
}  // namespace gauntlet::sim
