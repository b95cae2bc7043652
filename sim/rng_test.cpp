#include "sim/rng.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "sim/units.hpp"

namespace gauntlet::sim {
namespace {

TEST(RngStreams, SameSeedAndNameGiveSameSequence) {
  Rng a = RngStreams(7).stream("ecmp");
  Rng b = RngStreams(7).stream("ecmp");
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next(), b.next());
}

TEST(RngStreams, NamesSeedsAndRunsGiveIndependentStreams) {
  std::set<std::uint64_t> firsts;
  for (std::uint64_t seed : {1, 2})
    for (const char* name : {"ecmp", "faults", "jitter"})
      for (std::uint64_t run : {0, 1}) firsts.insert(RngStreams(seed).stream(name, run).next());
  EXPECT_EQ(firsts.size(), 12u);
}

TEST(Rng, UniformAndExponentialHaveTheRightMoments) {
  Rng rng = RngStreams(3).stream("moments");
  const int n = 200000;
  double sum_u = 0, sum_e = 0;
  for (int i = 0; i < n; ++i) {
    double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum_u += u;
    sum_e += rng.exponential(18.0);
  }
  EXPECT_NEAR(sum_u / n, 0.5, 0.005);
  EXPECT_NEAR(sum_e / n, 18.0, 0.3);
}

TEST(Rng, BelowIsUniformOverItsRange) {
  Rng rng = RngStreams(5).stream("below");
  int counts[6] = {};
  for (int i = 0; i < 60000; ++i) ++counts[rng.below(6)];
  for (int c : counts) EXPECT_NEAR(c, 10000, 400);
}

TEST(Bytes, ParsesDecimalAndBinaryUnits) {
  EXPECT_EQ(parse_bytes("2GB"), 2'000'000'000u);
  EXPECT_EQ(parse_bytes("64MB"), 64'000'000u);
  EXPECT_EQ(parse_bytes("1GiB"), 1073741824u);
  EXPECT_EQ(parse_bytes("1.5KB"), 1500u);
  EXPECT_EQ(parse_bytes("12B"), 12u);
  for (const char* bad : {"2", "GB", "2gb", "-1GB", "2 GB", "2XB"}) EXPECT_FALSE(parse_bytes(bad)) << bad;
}

}  // namespace
}  // namespace gauntlet::sim
