#include "models/roce_transport.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gauntlet::models {
namespace {

TEST(RoceTransport, PacketsInFlightAreTheBandwidthDelayProduct) {
  const RoceTransportParams p;
  EXPECT_DOUBLE_EQ(bdp_packets(50e9, 8 * sim::kMicrosecond, p), 50e9 * 8e-6 / 4096);  // 97.7 on 400 Gb/s
}

TEST(RetryExhaustion, OnePacketPerExchangeLosesEveryTry) {
  RoceTransportParams p;  // 7 retries, 2^20 packets: p^8 = 2^-20
  const double rate = retry_exhaustion_loss(p);
  EXPECT_NEAR(rate, std::pow(2.0, -2.5), 1e-12);
  EXPECT_NEAR(p.exchange_packets * std::pow(rate, p.retry_count + 1), 1.0, 1e-9);
  // The 1% loss of the fault scenarios is far below: 2^20 * 1e-16 tries.
  EXPECT_LT(p.exchange_packets * std::pow(0.01, p.retry_count + 1), 1e-9);
  // Fewer retries give up at a lower loss.
  RoceTransportParams impatient = p;
  impatient.retry_count = 3;
  EXPECT_LT(retry_exhaustion_loss(impatient), rate);
}

}  // namespace
}  // namespace gauntlet::models
