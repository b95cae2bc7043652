#include "sim/packet/packet_telemetry.hpp"

#include <gtest/gtest.h>

#include "sim/packet/packet_test_support.hpp"

namespace gauntlet::sim {
namespace {

const telemetry::PortCounters* find_port(const telemetry::Batch& batch, const std::string& link, bool upward) {
  for (const auto& r : batch.records())
    if (r.has_port() && r.port().link() == link && r.port().upward() == upward) return &r.port();
  return nullptr;
}

const telemetry::RnicTransportCounters* find_transport(const telemetry::Batch& batch, const std::string& nic) {
  for (const auto& r : batch.records())
    if (r.has_transport() && r.transport().nic() == nic) return &r.transport();
  return nullptr;
}

TEST(PacketTelemetry, LossyLinkShowsCrcErrorsAtTheReceiverAndNaksAtTheRnics) {
  Topology topology(small_packet_fabric());
  PacketEngine engine(topology, 7);
  PacketTelemetry counters(engine);
  const LinkId lossy = engine.route(0, 2)[1];
  engine.set_link_loss(lossy, 0.01);
  engine.start_transfer(0, 2, 8e6, nullptr);
  engine.run_until(kMillisecond);
  telemetry::Batch first;
  counters.sample(kMillisecond, &first);
  const telemetry::PortCounters* up = find_port(first, topology.link_name(lossy), true);
  ASSERT_NE(up, nullptr);
  EXPECT_GT(up->crc_errors(), 0u);
  EXPECT_GT(up->tx_packets(), 1954u);  // every data packet once, and the resent ones
  const telemetry::RnicTransportCounters* receiver = find_transport(first, "h2.nic0");
  const telemetry::RnicTransportCounters* sender = find_transport(first, "h0.nic0");
  ASSERT_NE(receiver, nullptr);
  ASSERT_NE(sender, nullptr);
  EXPECT_GT(receiver->naks_sent(), 0u);
  EXPECT_GT(receiver->out_of_sequence(), 0u);
  EXPECT_GT(sender->retransmitted_packets(), 0u);

  // Quiet afterwards: one zero record each, then nothing.
  engine.run_until(2 * kMillisecond);
  telemetry::Batch second, third;
  counters.sample(2 * kMillisecond, &second);
  ASSERT_NE(find_port(second, topology.link_name(lossy), true), nullptr);
  EXPECT_EQ(find_port(second, topology.link_name(lossy), true)->crc_errors(), 0u);
  engine.run_until(3 * kMillisecond);
  counters.sample(3 * kMillisecond, &third);
  EXPECT_EQ(find_port(third, topology.link_name(lossy), true), nullptr);
  EXPECT_EQ(find_transport(third, "h2.nic0"), nullptr);
}

TEST(PacketTelemetry, QueueDepthIsTheMeanOccupancyAndCnpsAreARate) {
  Topology topology(small_packet_fabric());
  PacketEngine engine(topology, 7);
  PacketTelemetry counters(engine);
  // Incast into endpoint 1: its leaf's egress queue builds and marks.
  engine.start_transfer(0, 1, 8e6, nullptr);
  engine.start_transfer(2, 1, 8e6, nullptr);
  engine.run_until(kMillisecond);
  telemetry::Batch batch;
  counters.sample(kMillisecond, &batch);
  const telemetry::PortCounters* down = find_port(batch, topology.link_name(topology.host_link(1)), false);
  ASSERT_NE(down, nullptr);
  EXPECT_GT(down->queue_depth(), 4096.0);  // more than a frame on average
  EXPECT_LT(down->queue_depth(), 32e6);    // within the shared buffer
  EXPECT_GT(down->ecn_marked(), 0u);
  const double cnps = static_cast<double>(engine.rnic_counters(0).cnp_handled);
  EXPECT_DOUBLE_EQ(counters.cnp_rate(0), cnps / 1e-3);
}

}  // namespace
}  // namespace gauntlet::sim
