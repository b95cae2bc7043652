#include "models/roce_transport.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/rng.hpp"

namespace gauntlet::models {
namespace {

// Packet-by-packet go-back-N: the sender streams packets; when one is lost,
// the receiver discards everything after it until the sender, learning of
// the loss a window later, resends from the lost packet.
double simulated_goodput(double loss, int window, int delivered_target) {
  sim::Rng rng = sim::RngStreams(11).stream("gbn");
  long long sent = 0;
  int delivered = 0;
  while (delivered < delivered_target) {
    ++sent;
    if (rng.uniform() < loss) {
      sent += window - 1;  // the rest of the window goes out before the NAK arrives
      continue;
    }
    ++delivered;
  }
  return static_cast<double>(delivered) / static_cast<double>(sent);
}

TEST(GoBackN, MatchesAPacketLevelSimulation) {
  for (double loss : {1e-4, 1e-3, 1e-2, 5e-2})
    for (int window : {1, 16, 122}) {
      const double expected = simulated_goodput(loss, window, 400000);
      EXPECT_NEAR(go_back_n_goodput(loss, window), expected, 0.02 * expected + 1e-3)
          << "loss=" << loss << " window=" << window;
    }
}

TEST(GoBackN, GoodputCollapsesSuperLinearlyWithLoss) {
  const double w = 122;
  const double drop_small = 1 - go_back_n_goodput(0.001, w);
  const double drop_large = 1 - go_back_n_goodput(0.01, w);
  EXPECT_GT(drop_small, 10 * 0.001);  // far more than the lost packets themselves
  EXPECT_GT(drop_large, 0.5);
  EXPECT_DOUBLE_EQ(go_back_n_goodput(0, w), 1.0);
}

TEST(GoBackN, WindowIsTheBandwidthDelayProductInPackets) {
  RoceTransportParams p;
  p.ack_overhead = 0;
  EXPECT_DOUBLE_EQ(window_packets(50e9, 8 * sim::kMicrosecond, p), std::ceil(50e9 * 8e-6 / 4096));
  EXPECT_DOUBLE_EQ(window_packets(1e3, sim::kMicrosecond, p), 1.0);
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
