// RS(544,514) FEC counters against the 400G design point: a pre-FEC BER
// around 2.4e-4 leaves uncorrectable codewords near 1e-12 (IEEE 802.3bs's
// target for a post-FEC error ratio below 1e-12 at 2.4e-4).
#include "sim/fec.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gauntlet::sim {
namespace {

TEST(Fec, DesignPointBerLeavesUncorrectableNearOneInATrillion) {
  const double s = symbol_error_probability_from_ber(2.4e-4);
  EXPECT_NEAR(s, 2.4e-3, 1e-5);
  const FecCounts c = fec_counts(s, kFecPayloadBitsPerCodeword * 1e12);  // a trillion codewords
  EXPECT_GT(c.uncorrectable_codewords, 0.1);
  EXPECT_LT(c.uncorrectable_codewords, 10);
  // Most codewords hold an error: a PAM4 link always counts corrections.
  EXPECT_GT(c.corrected_codewords, 0.7e12);
  EXPECT_NEAR(c.symbol_errors / 1e12, 544 * s, 1e-3);
}

TEST(Fec, HealthyBerCountsCorrectionsOnly) {
  // 400G at pre-FEC BER 1e-5 for one second: corrections by the million,
  // no uncorrectable codeword.
  const FecCounts c = fec_counts(symbol_error_probability_from_ber(1e-5), 400e9);
  EXPECT_GT(c.corrected_codewords, 1e6);
  EXPECT_LT(c.uncorrectable_codewords, 1e-20);
}

TEST(Fec, FrameLossMapsToTheSymbolErrorsThatCauseIt) {
  const double frame_bytes = 4096;
  for (double loss : {1e-6, 1e-4, 1e-2, 0.05}) {
    const double s = symbol_error_probability_for(loss, frame_bytes);
    const double per_frame = frame_bytes * 8 / kFecPayloadBitsPerCodeword;
    const FecCounts c = fec_counts(s, kFecPayloadBitsPerCodeword);  // one codeword
    EXPECT_NEAR(1 - std::pow(1 - c.uncorrectable_codewords, per_frame), loss, loss * 1e-6) << loss;
  }
  EXPECT_EQ(symbol_error_probability_for(0, frame_bytes), 0);
  EXPECT_LT(symbol_error_probability_for(1e-6, frame_bytes), symbol_error_probability_for(1e-2, frame_bytes));
}

}  // namespace
}  // namespace gauntlet::sim
