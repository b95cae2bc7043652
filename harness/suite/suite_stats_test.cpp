#include "harness/suite/suite_stats.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gauntlet::harness {
namespace {

TEST(Wilson, MatchesTheClosedFormAndStaysInsideTheUnitInterval) {
  // Wilson 95% for 0/10: [0, 0.2775]; for 5/10: [0.2366, 0.7634].
  const Interval none = wilson_interval(0, 10);
  EXPECT_DOUBLE_EQ(*none.value, 0);
  EXPECT_DOUBLE_EQ(none.low, 0);
  EXPECT_NEAR(none.high, 0.2775, 1e-4);
  const Interval half = wilson_interval(5, 10);
  EXPECT_NEAR(half.low, 0.2366, 1e-4);
  EXPECT_NEAR(half.high, 0.7634, 1e-4);
  const Interval all = wilson_interval(10, 10);
  EXPECT_DOUBLE_EQ(all.high, 1);
  EXPECT_NEAR(all.low, 1 - 0.2775, 1e-4);
  EXPECT_FALSE(wilson_interval(0, 0).value);
}

TEST(Wilson, NarrowsWithMoreTrials) {
  EXPECT_LT(wilson_interval(50, 100).high - wilson_interval(50, 100).low,
            wilson_interval(5, 10).high - wilson_interval(5, 10).low);
}

TEST(Quantile, InterpolatesBetweenOrderStatistics) {
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4, 5}, 0.95), 4.8);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.95), 7);
}

TEST(Bootstrap, IsDeterministicAndHoldsThePointEstimate) {
  const std::vector<double> latencies = {3, 10, 10, 20, 31, 49, 51, 67, 72, 125};
  const Interval a = bootstrap_quantile(latencies, 0.5), b = bootstrap_quantile(latencies, 0.5);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  EXPECT_DOUBLE_EQ(*a.value, 40);
  EXPECT_LE(a.low, *a.value);
  EXPECT_GE(a.high, *a.value);
  EXPECT_GE(a.low, 3);
  EXPECT_LE(a.high, 125);
  EXPECT_LT(a.low, a.high);
  // A constant sample has nothing to vary.
  const Interval constant = bootstrap_quantile({5, 5, 5}, 0.95);
  EXPECT_DOUBLE_EQ(constant.low, 5);
  EXPECT_DOUBLE_EQ(constant.high, 5);
}

TEST(PoissonRate, GarwoodIntervalsOfTheTables) {
  // Exact 95% limits on a Poisson count: 0 -> [0, 3.689], 3 -> [0.619, 8.767].
  const Interval none = poisson_rate_interval(0, 10);
  EXPECT_DOUBLE_EQ(*none.value, 0);
  EXPECT_DOUBLE_EQ(none.low, 0);
  EXPECT_NEAR(none.high, 0.3689, 1e-4);
  const Interval three = poisson_rate_interval(3, 4);
  EXPECT_DOUBLE_EQ(*three.value, 0.75);
  EXPECT_NEAR(three.low, 0.619 / 4, 1e-3);
  EXPECT_NEAR(three.high, 8.767 / 4, 1e-3);
  EXPECT_FALSE(poisson_rate_interval(0, 0).value);
  // The gamma quantile itself: shape 1 is the exponential, -ln(1 - p).
  EXPECT_NEAR(gamma_quantile(0.975, 1), -std::log(0.025), 1e-9);
}

TEST(McNemar, ExactBinomialOnTheDiscordantPairs) {
  EXPECT_DOUBLE_EQ(mcnemar_exact_p(0, 0), 1);
  EXPECT_NEAR(mcnemar_exact_p(0, 6), 2.0 / 64, 1e-12);
  EXPECT_NEAR(mcnemar_exact_p(6, 1), 2.0 * 8 / 128, 1e-12);
  EXPECT_DOUBLE_EQ(mcnemar_exact_p(3, 3), 1);
  // Large counts stay finite: 40 against 60 discordant pairs is p ~ 0.057.
  EXPECT_NEAR(mcnemar_exact_p(40, 60), 0.0569, 1e-3);
}

}  // namespace
}  // namespace gauntlet::harness
