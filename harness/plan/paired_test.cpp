// Paired comparisons by seed: the interval of the mean per-seed difference
// (Student t, n-1 degrees of freedom) and the seeds that would separate two
// settings.
#include "harness/plan/paired.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gauntlet::harness {
namespace {

TEST(Paired, TwoSeedsThatAgreeSeparateTheSettings) {
  // 16 spares against 4 over two seeds: each seed's faults cost the 4-spare
  // setting 21.8k and 22.6k GPU-hours more. The settings' own intervals over
  // two seeds (t = 12.71) span +-508k; the paired one 22.2k +- 5.1k.
  const std::map<std::uint64_t, double> sixteen = {{1, 50'000}, {2, 130'000}};
  const std::map<std::uint64_t, double> four = {{1, 71'800}, {2, 152'600}};
  const PairedComparison c = compare_paired(sixteen, four);
  EXPECT_EQ(c.seeds, 2);
  EXPECT_EQ(c.b_costlier, 2);
  EXPECT_DOUBLE_EQ(c.difference.mean, 22'200);
  // sd of {21.8k, 22.6k} is 565.7; t(0.975, 1) = 12.706.
  EXPECT_NEAR(c.difference.half_width, 12.706 * 565.685 / std::sqrt(2.0), 5);
  EXPECT_TRUE(c.separated);
  EXPECT_EQ(c.seeds_needed, 2);
}

TEST(Paired, TwoSeedsThatDisagreeInSizeDoNot) {
  // Issue figures: 20-minute checkpoints beat 40 minutes by 7.6k and 11.8k
  // GPU-hours. Both seeds agree on the sign, but two seeds spread that much
  // leave the t interval (+-26.7k) over 0; the same mean and spread need 3.
  const PairedComparison c = compare_paired({{1, 0}, {2, 0}}, {{1, 7'600}, {2, 11'800}});
  EXPECT_EQ(c.b_costlier, 2);
  EXPECT_DOUBLE_EQ(c.difference.mean, 9'700);
  EXPECT_FALSE(c.separated);
  ASSERT_TRUE(c.seeds_needed.has_value());
  // sd 2,970: t(0.975, 2) x 2,970 / sqrt(3) = 7,378 < 9,700; at n = 2 it is 26,684.
  EXPECT_EQ(*c.seeds_needed, 3);
}

TEST(Paired, SeedsOnlyOneSettingRanAreLeftOut) {
  const PairedComparison c = compare_paired({{1, 10}, {2, 20}, {3, 30}}, {{2, 25}, {3, 36}, {4, 0}});
  EXPECT_EQ(c.seeds, 2);
  EXPECT_DOUBLE_EQ(c.difference.mean, 5.5);
}

TEST(Paired, SeedsToSeparateFollowsTheTQuantile) {
  EXPECT_EQ(seeds_to_separate(0, 1), std::nullopt);
  EXPECT_EQ(seeds_to_separate(5, 0), 2);
  // mean = sd: n = 7 is the first with t(0.975, n-1) < sqrt(n) (2.447 < 2.646; n = 6: 2.571 > 2.449).
  EXPECT_EQ(seeds_to_separate(1, 1), 7);
  EXPECT_EQ(seeds_to_separate(-1, 1), 7);
  for (int n : {3, 10, 40}) {
    const double sd = std::sqrt(static_cast<double>(n)) / student_t_quantile(0.975, n - 1) * 0.999;
    EXPECT_EQ(seeds_to_separate(1, sd), n) << n;
  }
  EXPECT_EQ(seeds_to_separate(1e-9, 1), std::nullopt) << "past the cap";
}

}  // namespace
}  // namespace gauntlet::harness
