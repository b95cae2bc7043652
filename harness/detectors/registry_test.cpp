#include "harness/detectors/registry.hpp"

#include <gtest/gtest.h>

namespace gauntlet::harness {
namespace {

TEST(DetectorRegistry, BuiltinsAreRegisteredWithDefaults) {
  DetectorRegistry reg = builtin_detectors();
  const DetectorInfo* timeout = reg.find("timeout");
  const DetectorInfo* falcon = reg.find("falcon");
  ASSERT_TRUE(timeout);
  ASSERT_TRUE(falcon);
  EXPECT_FALSE(reg.find("nope"));
  auto names = reg.names();
  EXPECT_NE(std::find(names.begin(), names.end(), "timeout"), names.end());

  std::string error;
  auto p = reg.resolve(*timeout, {}, &error);
  ASSERT_TRUE(p) << error;
  EXPECT_EQ(p->duration("collective_timeout"), 30 * sim::kMinute);
  EXPECT_EQ(p->duration("manual_diagnosis"), 3 * sim::kHour);
  EXPECT_EQ(p->text("suspect"), "auto");

  auto f = reg.resolve(*falcon, {{"name", "falcon"}, {"min_shift", "0.2"}, {"min_gap", "12"}}, &error);
  ASSERT_TRUE(f) << error;
  EXPECT_DOUBLE_EQ(f->number("min_shift"), 0.2);
  EXPECT_EQ(f->integer("min_gap"), 12);
  EXPECT_DOUBLE_EQ(f->number("hazard"), 0.005);
  EXPECT_DOUBLE_EQ(f->number("compute_ratio"), 1.2);

  DetectorContext ctx;
  ctx.params = *f;
  EXPECT_TRUE(falcon->make(ctx));
  ctx.params = *p;
  EXPECT_TRUE(timeout->make(ctx));
}

TEST(DetectorRegistry, RejectsUnknownKeysAndBadValues) {
  DetectorRegistry reg = builtin_detectors();
  const DetectorInfo& falcon = *reg.find("falcon");
  const DetectorInfo& timeout = *reg.find("timeout");
  std::string error, key;
  EXPECT_FALSE(reg.resolve(falcon, {{"min_shfit", "0.2"}}, &error, &key));
  EXPECT_EQ(key, "min_shfit");
  EXPECT_NE(error.find("unknown parameter 'min_shfit'"), std::string::npos) << error;

  EXPECT_FALSE(reg.resolve(falcon, {{"min_gap", "1.5"}}, &error, &key));
  EXPECT_EQ(key, "min_gap");
  EXPECT_FALSE(reg.resolve(falcon, {{"min_shift", "abc"}}, &error, &key));
  EXPECT_EQ(key, "min_shift");
  EXPECT_FALSE(reg.resolve(falcon, {{"hazard", "0.9"}}, &error, &key));
  EXPECT_NE(error.find("at most 0.5"), std::string::npos) << error;
  EXPECT_FALSE(reg.resolve(falcon, {{"compute_ratio", "0.8"}}, &error, &key));
  EXPECT_NE(error.find("at least 1"), std::string::npos) << error;

  EXPECT_FALSE(reg.resolve(timeout, {{"collective_timeout", "30"}}, &error, &key));
  EXPECT_EQ(key, "collective_timeout");
  EXPECT_FALSE(reg.resolve(timeout, {{"suspect", "rack"}}, &error, &key));
  EXPECT_NE(error.find("auto, gpu, host"), std::string::npos) << error;
  auto ok = reg.resolve(timeout, {{"collective_timeout", "10m"}, {"suspect", "host"}}, &error, &key);
  ASSERT_TRUE(ok) << error;
  EXPECT_EQ(ok->duration("collective_timeout"), 10 * sim::kMinute);
}

TEST(DetectorRegistry, DuplicateNamesAndUndeclaredParams) {
  DetectorRegistry reg = builtin_detectors();
  DetectorInfo again;
  again.name = "falcon";
  EXPECT_THROW(reg.add(again), std::invalid_argument);
  DetectorParams params(std::map<std::string, std::string>{{"x", "7"}});
  EXPECT_EQ(params.integer("x"), 7);
  EXPECT_THROW(params.number("y"), std::out_of_range);
  EXPECT_THROW(params.duration("x"), std::invalid_argument);
}

}  // namespace
}  // namespace gauntlet::harness
