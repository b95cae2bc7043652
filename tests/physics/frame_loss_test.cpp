// Corruption by frame length. A `link_loss` fault's rate is the loss of a
// full 4,158-byte RoCEv2 data frame on the wire (4 KB MTU); shorter frames
// lose less, by how much of the corrupted stream they expose:
//   - without FEC (40GBASE-R), independent bit errors at a bit error ratio
//     BER lose a frame of b bits with 1 - (1 - BER)^b (the binary
//     symmetric channel; IEEE 802.3 specifies links by BER and the frame
//     check sequence fails on any errored bit): a 64-byte ACK or NAK is
//     lost about 65 times less often than a data frame;
//   - with RS-FEC (IEEE 802.3 clauses 91 and 119, mandatory from 100 Gb/s
//     on the PHYs RoCE fabrics use) what is left after correction are
//     whole uncorrectable codewords of 5,140 payload bits, and a frame is
//     lost when one it touches is: a frame at a random offset touches
//     1 + (L - 1) / 5140 codewords, 1.10 for a 64-byte frame against 7.47,
//     so it is lost 6.8 times less often.
// Measured at 10% data-frame loss, each way of the receiver's host link.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/fec.hpp"
#include "sim/packet/packet_engine.hpp"
#include "sim/packet/packet_test_support.hpp"

namespace gauntlet::sim {
namespace {

constexpr double kRate = 0.1;

// Whether `lost` of `n` trials is within 4 standard deviations of n x p
// (plus one, for small counts).
void expect_binomial(std::uint64_t lost, std::uint64_t n, double p, const char* what) {
  const double mean = static_cast<double>(n) * p;
  const double band = 4 * std::sqrt(mean * (1 - p)) + 1;
  EXPECT_NEAR(static_cast<double>(lost), mean, band) << what << ": " << lost << " of " << n << ", p " << p;
}

struct Directions {
  PacketPortCounters data;     // the leaf's data frames toward the receiver
  PacketPortCounters control;  // the receiver's 64-byte ACKs and NAKs
};

// An endless stream over a link at `gbps` losing kRate of its data frames.
// The responder ACKs every packet and NAKs a persisting hole again after
// 20 us, so hundreds of 64-byte frames are lost in the window: their share
// is measured, not only bounded.
Directions stream_over_lossy_link(double gbps, Nanos window) {
  RoceParams params;
  params.transport.ack_every = 1;
  params.transport.nak_interval = 20 * kMicrosecond;
  ClusterShape shape = small_packet_fabric(2, 1);
  shape.host_link_gbps = shape.fabric_link_gbps = gbps;
  Topology topology(shape);
  PacketEngine engine(topology, 5, params);
  const LinkId lossy = topology.host_link(1);
  engine.set_link_loss(lossy, kRate);
  engine.start_transfer(0, 1, 1e15, nullptr);  // a stream no window sees the end of
  engine.run_until(window);
  return {engine.port_counters(lossy, /*upward=*/false), engine.port_counters(lossy, /*upward=*/true)};
}

TEST(FrameLoss, WithoutFecAcknowledgementsLoseByTheirBits) {
  // 40 Gb/s: a short go-back-N loop, so most frames arrive in order.
  const Directions d = stream_over_lossy_link(40, 200 * kMillisecond);
  ASSERT_GT(d.data.tx_packets, 100'000u);
  ASSERT_GT(d.control.tx_packets, 100'000u);
  expect_binomial(d.data.crc_errors, d.data.tx_packets, kRate, "data frames");
  // 1 - 0.9^(512 / 33,264) = 0.16%: 62 times less than a data frame.
  const double control_loss = 1 - std::pow(1 - kRate, 512.0 / 33264.0);
  ASSERT_NEAR(control_loss, 0.00162, 0.00001);
  expect_binomial(d.control.crc_errors, d.control.tx_packets, control_loss, "64-byte frames");
  // A frame-length-blind model would lose them as often as data frames.
  EXPECT_LT(static_cast<double>(d.control.crc_errors), 0.1 * kRate * static_cast<double>(d.control.tx_packets));
  EXPECT_GT(d.control.crc_errors, 100u);
}

TEST(FrameLoss, WithRsFecAcknowledgementsLoseByTheCodewordsTheyTouch) {
  const Directions d = stream_over_lossy_link(400, 60 * kMillisecond);
  ASSERT_GT(d.data.tx_packets, 50'000u);
  ASSERT_GT(d.control.tx_packets, 50'000u);
  expect_binomial(d.data.crc_errors, d.data.tx_packets, kRate, "data frames");
  // 1 - 0.9^(1.0994 / 7.4714) = 1.54%: 6.5 times less than a data frame,
  // ten times the share bit errors alone would lose.
  const double control_loss = 1 - std::pow(1 - kRate, (1 + 511.0 / 5140) / (1 + 33263.0 / 5140));
  ASSERT_NEAR(control_loss, 0.0154, 0.0001);
  EXPECT_NEAR(frame_loss_by_length(kRate, 4158, 64, true), control_loss, 1e-12);
  expect_binomial(d.control.crc_errors, d.control.tx_packets, control_loss, "64-byte frames");
}

}  // namespace
}  // namespace gauntlet::sim
