#include "sim/calibration.hpp"

#include <gtest/gtest.h>

#include <array>
#include <stdexcept>

namespace gauntlet::sim {
namespace {

constexpr Attribute kTimeout{"test.timeout", AttributeUnit::duration, 4e9, 1e6, 3600e9, "a timeout", "a datasheet"};
constexpr Attribute kRetries{"test.retries", AttributeUnit::count, 7, 0, 100, "tries after the first", ""};
constexpr Attribute kShare{"alpha.share", AttributeUnit::ratio, 0.97, 0, 1, "a share", ""};
constexpr std::array<const Attribute*, 2> kTestGroup{&kTimeout, &kRetries};
constexpr std::array<const Attribute*, 1> kAlphaGroup{&kShare};

TEST(Calibration, UnsetAttributesKeepTheirDefaults) {
  const Calibration calibration;
  EXPECT_EQ(calibration.duration(kTimeout), 4 * kSecond);
  EXPECT_EQ(calibration.count(kRetries), 7);
  EXPECT_FALSE(calibration.is_set(kTimeout));
  EXPECT_TRUE(calibration.empty());
}

TEST(Calibration, ASetValueReplacesTheDefaultOfThatAttributeOnly) {
  Calibration calibration;
  calibration.set(kTimeout, 6e9);
  EXPECT_EQ(calibration.duration(kTimeout), 6 * kSecond);
  EXPECT_TRUE(calibration.is_set(kTimeout));
  EXPECT_EQ(calibration.count(kRetries), 7);
  EXPECT_FALSE(calibration.is_set(kRetries));
}

TEST(Calibration, RejectsValuesOutsideTheRangeOrNotWhole) {
  Calibration calibration;
  EXPECT_THROW(calibration.set(kTimeout, 0.5e6), std::invalid_argument);
  EXPECT_THROW(calibration.set(kRetries, 101), std::invalid_argument);
  EXPECT_THROW(calibration.set(kRetries, 2.5), std::invalid_argument);
  EXPECT_NO_THROW(calibration.set(kRetries, 0));  // bounds are inclusive
  EXPECT_NO_THROW(calibration.set(kShare, 1.0));
}

TEST(AttributeRegistry, FindsByNameAcrossGroupsInNameOrder) {
  const AttributeRegistry registry{kTestGroup, kAlphaGroup};
  ASSERT_EQ(registry.all().size(), 3u);
  EXPECT_EQ(registry.all().front()->name, "alpha.share");
  EXPECT_EQ(registry.find("test.retries"), &kRetries);
  EXPECT_EQ(registry.find("test.retrie"), nullptr);
  EXPECT_EQ(registry.find("test"), nullptr);
}

TEST(AttributeRegistry, ANameDeclaredTwiceIsAnError) {
  EXPECT_THROW((AttributeRegistry{kTestGroup, kTestGroup}), std::logic_error);
}

TEST(AttributeValues, FormatAsAScenarioWritesThemAndReportInTheNamedUnit) {
  EXPECT_EQ(format_attribute_value(kTimeout, 4e9), "4s");
  EXPECT_EQ(format_attribute_value(kTimeout, 1.5e6), "1500us");
  EXPECT_EQ(format_attribute_value(kShare, 0.97), "0.97");
  const Attribute mtu{"rnic.mtu", AttributeUnit::bytes, 4096, 256, 65536, "", ""};
  EXPECT_EQ(format_attribute_value(mtu, 4096), "4096B");
  EXPECT_DOUBLE_EQ(reported_value(kTimeout, 4e9), 4.0);
  EXPECT_EQ(unit_symbol(kTimeout.unit), "s");
  EXPECT_DOUBLE_EQ(reported_value(kShare, 0.97), 0.97);
  EXPECT_EQ(unit_symbol(AttributeUnit::celsius), "C");
}

}  // namespace
}  // namespace gauntlet::sim
