// The reaction point's arithmetic, step by step against the firmware's
// documented rules (DcqcnParams): when a cut happens, by how much, and how
// the rate climbs back.
#include "sim/packet/dcqcn_rate.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gauntlet::sim::packet {
namespace {

constexpr double kLine = 400e9 / 8;

TEST(DcqcnRate, AFirstCnpCutsByHalfOfTheInitialAlphaAtTheEndOfItsMonitorPeriod) {
  const DcqcnParams params;
  DcqcnRate rate(params, kLine);
  const Nanos at = rate.on_cnp(10 * kMicrosecond);
  EXPECT_EQ(at, 10 * kMicrosecond + params.rate_reduce_monitor_period);
  EXPECT_EQ(rate.on_cnp(12 * kMicrosecond), -1) << "one cut per monitor period";
  rate.decrease(at);
  // alpha is 1023/1024 at the first CNP; by the cut, one 1 us period with
  // a CNP (the one at 12 us) and three without have passed.
  const double g = params.alpha_gain;
  double alpha = params.initial_alpha;
  alpha = (1 - g) * alpha;      // 10-11 us
  alpha = (1 - g) * alpha;      // 11-12 us
  alpha = (1 - g) * alpha + g;  // 12-13 us: the CNP at 12 us
  alpha = (1 - g) * alpha;      // 13-14 us
  EXPECT_NEAR(rate.alpha(at), alpha, 1e-12);
  EXPECT_NEAR(rate.rate(), kLine * (1 - alpha / 2), kLine * 1e-12);
  EXPECT_EQ(rate.target(), kLine);
}

TEST(DcqcnRate, AlphaDecaysEveryPeriodWithoutACnp) {
  const DcqcnParams params;
  DcqcnRate rate(params, kLine);
  rate.on_cnp(0);
  const double after_ms = rate.alpha(kMillisecond);
  EXPECT_NEAR(after_ms, params.initial_alpha * std::pow(1 - params.alpha_gain, 1000), 1e-12);
  EXPECT_LT(after_ms, 0.01) << "1019/1024 per microsecond: alpha is ~0.7% after 1 ms";
}

TEST(DcqcnRate, ACutIsBoundedByTheMinimumDecreaseFactor) {
  DcqcnParams params;
  params.min_decrease_factor = 0.8;
  DcqcnRate rate(params, kLine);
  rate.decrease(rate.on_cnp(0));
  EXPECT_DOUBLE_EQ(rate.rate(), 0.8 * kLine);
}

TEST(DcqcnRate, RecoveryIsFastRecoveryThenAdditiveThenHyper) {
  DcqcnParams params;
  params.byte_counter = 0;  // the timer alone
  DcqcnRate rate(params, kLine);
  rate.decrease(rate.on_cnp(0));
  const double cut = rate.rate();
  ASSERT_EQ(rate.target(), kLine);
  rate.on_timer();  // stage 1 of F = 1: fast recovery, halfway back
  EXPECT_DOUBLE_EQ(rate.rate(), (cut + kLine) / 2);
  // A second cut with no increase since keeps the target; one after an
  // increase clamps it to the rate.
  rate.decrease(rate.on_cnp(kMillisecond));
  const double second = rate.rate();
  EXPECT_EQ(rate.target(), (cut + kLine) / 2);
  rate.decrease(rate.on_cnp(2 * kMillisecond));
  EXPECT_EQ(rate.target(), (cut + kLine) / 2) << "no increase between the cuts";
  const double third = rate.rate();
  EXPECT_LT(third, second);
  rate.on_timer();  // fast recovery
  const double target = rate.target();
  rate.on_timer();  // stage 2 > F: the timer alone counts for both, so hyper
  EXPECT_DOUBLE_EQ(rate.target(), target + params.hyper_increase);
}

TEST(DcqcnRate, TheByteCounterAddsStagesAsBytesGoOut) {
  const DcqcnParams params;
  DcqcnRate rate(params, kLine);
  rate.decrease(rate.on_cnp(0));
  const double cut = rate.rate();
  rate.on_sent(params.byte_counter - 1);
  EXPECT_EQ(rate.rate(), cut);
  rate.on_sent(1);  // byte stage 1: fast recovery
  EXPECT_DOUBLE_EQ(rate.rate(), (cut + kLine) / 2);
  rate.on_sent(params.byte_counter);  // byte stage 2, timer stage 0: additive
  EXPECT_DOUBLE_EQ(rate.target(), kLine) << "the target is capped at the line rate";
}

}  // namespace
}  // namespace gauntlet::sim::packet
