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
    // A frame at a random offset in the codeword stream touches 1 + (L - 1) / C codewords.
    const double per_frame = 1 + (frame_bytes * 8 - 1) / kFecPayloadBitsPerCodeword;
    const FecCounts c = fec_counts(s, kFecPayloadBitsPerCodeword);  // one codeword
    EXPECT_NEAR(1 - std::pow(1 - c.uncorrectable_codewords, per_frame), loss, loss * 1e-6) << loss;
  }
  EXPECT_EQ(symbol_error_probability_for(0, frame_bytes), 0);
  EXPECT_LT(symbol_error_probability_for(1e-6, frame_bytes), symbol_error_probability_for(1e-2, frame_bytes));
}

TEST(Fec, ShortFramesLoseLessByTheCodewordsOrBitsTheyExpose) {
  // A full 4,158-byte RoCEv2 data frame (4 KB MTU, 62 bytes of headers)
  // against a 64-byte ACK at 1e-4 data-frame loss, where loss is linear in
  // exposure: RS-FEC leaves whole codewords uncorrected (7.47 against 1.10
  // codewords touched), raw bit errors hit bits (33,264 against 512).
  const double data = 4158, ack = 64, loss = 1e-4;
  EXPECT_DOUBLE_EQ(frame_loss_by_length(loss, data, data, true), loss);
  EXPECT_DOUBLE_EQ(frame_loss_by_length(loss, data, data, false), loss);
  EXPECT_NEAR(loss / frame_loss_by_length(loss, data, ack, true), (1 + 33263.0 / 5140) / (1 + 511.0 / 5140), 0.01);
  EXPECT_NEAR(loss / frame_loss_by_length(loss, data, ack, false), 33264.0 / 512, 0.01);
  // At high loss the exposures compound: two data frames' worth of bits
  // survive with (1 - p)^2.
  EXPECT_NEAR(frame_loss_by_length(0.1, data, 2 * data, false), 1 - 0.9 * 0.9, 1e-12);
}

}  // namespace
}  // namespace gauntlet::sim
