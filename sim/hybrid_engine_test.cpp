// The hybrid engine against the two it is made of. SimGrid and ns-3 each
// keep one engine per process, so every run below goes to a process of its
// own and reports what it saw as text.
#include "sim/hybrid_engine.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "sim/flow/flow_engine.hpp"
#include "sim/isolated_run.hpp"
#include "sim/packet/packet_engine.hpp"
#include "sim/packet/packet_test_support.hpp"

namespace gauntlet::sim {
namespace {

constexpr double kLineRate = 50e9;  // 400 Gb/s in bytes per second

// A workload touching what the flow engine models: transfers that share
// links, one started from a timer, a degraded link and a slow flow table.
std::string healthy_workload(NetworkEngine& engine) {
  std::ostringstream out;
  auto record = [&out](int i) { return [&out, i](Nanos at) { out << i << "@" << at << " "; }; };
  engine.start_transfer(0, 2, 8e6, record(0));
  engine.start_transfer(1, 2, 8e6, record(1));
  engine.start_transfer(3, 0, 2e6, record(2));
  engine.set_link_state(engine.topology().fabric_link(0, 1), PathState{0.5, 2 * kMicrosecond, true});
  engine.set_endpoint_state(3, PathState{0.25, 0, true});
  engine.schedule_at(100 * kMicrosecond, [&] { engine.start_transfer(2, 1, 4e6, record(3)); });
  engine.run_until(10 * kMillisecond);
  out << "now " << engine.now() << " version " << engine.state_version();
  return out.str();
}

TEST(HybridEngine, WithoutPacketFaultsItIsTheFlowEngineExactly) {
  const Topology topology(small_packet_fabric());
  const std::string flow = run_isolated([&] {
    FlowEngine engine(topology, 3);
    return healthy_workload(engine);
  });
  const std::string hybrid = run_isolated([&] {
    HybridEngine engine(topology, 3);
    std::string out = healthy_workload(engine);
    return out + " batches " + std::to_string(engine.packet_batches());
  });
  EXPECT_EQ(hybrid, flow + " batches 0");
  EXPECT_NE(flow.find("3@"), std::string::npos) << flow;
}

TEST(HybridEngine, TransfersOffTheFaultyPathStayOnTheFlowEngine) {
  const Topology topology(small_packet_fabric());
  // Endpoint 1's host link is lossy; 0 -> 2 and 3 -> 2 never cross it.
  auto workload = [&](NetworkEngine& engine) {
    std::ostringstream out;
    engine.start_transfer(0, 2, 8e6, [&out](Nanos at) { out << "a@" << at << " "; });
    engine.start_transfer(3, 2, 8e6, [&out](Nanos at) { out << "b@" << at << " "; });
    engine.run_until(10 * kMillisecond);
    return out.str();
  };
  const std::string flow = run_isolated([&] {
    FlowEngine engine(topology, 3);
    return workload(engine);
  });
  const std::string hybrid = run_isolated([&] {
    HybridEngine engine(topology, 3);
    engine.set_link_loss(topology.host_link(1), "f1", 0.01);
    EXPECT_FALSE(engine.at_packet_level(0, 2));
    EXPECT_TRUE(engine.at_packet_level(1, 3));
    return workload(engine) + "batches " + std::to_string(engine.packet_batches());
  });
  EXPECT_EQ(hybrid, flow + "batches 0");
}

// What a lossy link did to one 16 MB transfer over it, and to one beside it.
struct LossOutcome {
  Nanos lossy_done = -1;
  Nanos clean_done = -1;
  PacketRnicCounters sender;
  PacketRnicCounters receiver;
  PacketRnicCounters clean_sender;
  std::uint64_t crc_errors = 0;  // at the leaf's port, frames from the sender
  std::uint64_t frames = 0;      // the sender sent up its host link
};

std::string encode(const LossOutcome& o) {
  std::ostringstream out;
  out << o.lossy_done << " " << o.clean_done << " " << o.sender.retransmitted_packets << " " << o.sender.naks_received
      << " " << o.receiver.naks_sent << " " << o.clean_sender.retransmitted_packets << " " << o.crc_errors << " "
      << o.frames << " " << o.sender.timeouts;
  return out.str();
}

LossOutcome decode(const std::string& text) {
  std::istringstream in(text);
  LossOutcome o;
  in >> o.lossy_done >> o.clean_done >> o.sender.retransmitted_packets >> o.sender.naks_received >>
      o.receiver.naks_sent >> o.clean_sender.retransmitted_packets >> o.crc_errors >> o.frames >> o.sender.timeouts;
  return o;
}

template <typename Engine>
std::string lossy_run(const Topology& topology) {
  Engine engine(topology, 9);
  LossOutcome o;
  engine.set_link_loss(topology.host_link(0), "f1", 0.01);
  // 64 MB: about 160 losses, so the resends per loss of two runs with
  // different draws agree within noise.
  engine.start_transfer(0, 2, 64e6, [&o](Nanos at) { o.lossy_done = at; });
  engine.start_transfer(1, 3, 16e6, [&o](Nanos at) { o.clean_done = at; });
  // Long enough for a retransmission timeout (a lost tail has no NAK).
  engine.run_until(2 * kSecond);
  o.sender = engine.rnic_counters(0);
  o.receiver = engine.rnic_counters(2);
  o.clean_sender = engine.rnic_counters(1);
  o.crc_errors = engine.port_counters(topology.host_link(0), true).crc_errors;
  o.frames = engine.port_counters(topology.host_link(0), true).tx_packets;
  return encode(o);
}

TEST(HybridEngine, ALossyLinkShowsResendsNaksAndCrcErrorsAsOnThePacketEngine) {
  const Topology topology(small_packet_fabric());
  const LossOutcome packet = decode(run_isolated([&] { return lossy_run<PacketEngine>(topology); }));
  const LossOutcome hybrid = decode(run_isolated([&] { return lossy_run<HybridEngine>(topology); }));
  ASSERT_GT(hybrid.lossy_done, 0);
  ASSERT_GT(packet.lossy_done, 0);
  // The leaf's port drops 1% of the frames it receives as CRC errors.
  ASSERT_GT(hybrid.frames, 15600u);  // 64 MB in 4 KiB frames, and resends
  EXPECT_NEAR(static_cast<double>(hybrid.crc_errors), 0.01 * static_cast<double>(hybrid.frames),
              4 * std::sqrt(0.01 * static_cast<double>(hybrid.frames)));
  // Go-back-N: every loss is a NAK, and resends from it far outnumber losses.
  EXPECT_GT(hybrid.receiver.naks_sent, 0u);
  // NAKs cross the lossy link back, so a few of them are lost too.
  EXPECT_LE(hybrid.sender.naks_received, hybrid.receiver.naks_sent);
  EXPECT_GE(static_cast<double>(hybrid.sender.naks_received), 0.9 * static_cast<double>(hybrid.receiver.naks_sent));
  EXPECT_GT(hybrid.sender.retransmitted_packets, 5 * hybrid.crc_errors);
  // Each loss costs the packet engine's go-back-N what it costs the batch:
  // the frames in flight behind it (the draws differ, so within noise).
  ASSERT_GT(packet.crc_errors, 0u);
  const double resent_per_loss = static_cast<double>(hybrid.sender.retransmitted_packets) / hybrid.crc_errors;
  const double packet_resent_per_loss = static_cast<double>(packet.sender.retransmitted_packets) / packet.crc_errors;
  EXPECT_NEAR(resent_per_loss, packet_resent_per_loss, 0.35 * packet_resent_per_loss)
      << hybrid.crc_errors << " and " << packet.crc_errors << " losses";
  // The transfer beside it stayed at flow level: line rate, no resends.
  EXPECT_EQ(hybrid.clean_sender.retransmitted_packets, 0u);
  const double clean_ns = 16e6 / kLineRate * 1e9 + 4 * 1000;
  EXPECT_NEAR(static_cast<double>(hybrid.clean_done), clean_ns, clean_ns * 0.001);
  // Loss slowed the lossy one well past line rate.
  EXPECT_GT(hybrid.lossy_done, hybrid.clean_done * 1.2);
}

TEST(HybridEngine, APfcStormHoldsTrafficToTheStormingNicUntilItEnds) {
  const Topology topology(small_packet_fabric());
  const std::string text = run_isolated([&] {
    HybridEngine engine(topology, 4);
    std::ostringstream out;
    // RNIC 2 pauses its leaf for 3 ms: nothing reaches it meanwhile.
    engine.start_pfc_storm_from_endpoint(2, 3 * kMillisecond);
    Nanos stormed = -1;
    engine.start_transfer(0, 2, 4e6, [&](Nanos at) { stormed = at; });
    engine.run_until(20 * kMillisecond);
    out << stormed << " " << engine.packet_batches() << " "
        << engine.port_counters(topology.host_link(2), /*upward=*/false).pause_received << " ";
    // Once the storm is over, transfers to it are flow-level again.
    out << engine.at_packet_level(0, 2);
    return out.str();
  });
  std::istringstream in(text);
  Nanos stormed = 0;
  std::uint64_t batches = 0, pauses = 0;
  bool still_packet = true;
  in >> stormed >> batches >> pauses >> still_packet;
  const double lone_ns = 4e6 / kLineRate * 1e9;
  EXPECT_GE(stormed, 3 * kMillisecond);
  EXPECT_LT(static_cast<double>(stormed), 3e6 + 3 * lone_ns);
  EXPECT_EQ(batches, 1u);
  EXPECT_GT(pauses, 0u);
  EXPECT_FALSE(still_packet);
}

TEST(HybridEngine, APfcStormStallsATransferThatNeverCrossesTheStormingPort) {
  // The packet engine's head-of-line case (packet_engine_test): one leaf,
  // RNIC 0 storms, 1 sends to 0 and to 2 at once; 1 -> 2 waits too.
  const Topology topology(small_packet_fabric(3, 1));
  const Nanos storm_end = 10 * kMillisecond;
  const std::string text = run_isolated([&] {
    HybridEngine engine(topology, 7);
    engine.start_pfc_storm_from_endpoint(0, storm_end);
    std::ostringstream out;
    out << engine.at_packet_level(1, 2) << " ";
    Nanos stalled = -1;
    engine.start_transfer(1, 0, 8e6, nullptr);
    engine.start_transfer(1, 2, 8e6, [&](Nanos at) { stalled = at; });
    engine.run_until(kSecond);
    out << stalled << " " << engine.packet_batches() << " "
        << engine.port_counters(topology.host_link(1), /*upward=*/true).pause_sent;
    return out.str();
  });
  std::istringstream in(text);
  bool spread = false;
  Nanos stalled = 0;
  std::uint64_t batches = 0, pauses = 0;
  in >> spread >> stalled >> batches >> pauses;
  EXPECT_TRUE(spread);
  EXPECT_GT(stalled, storm_end) << text;
  EXPECT_EQ(batches, 1u);
  EXPECT_GT(pauses, 0u);
}

TEST(HybridEngine, AStormSpreadsToTheLinksIntoThePausedSwitchOnly) {
  // Two leaves of two hosts: RNIC 0 pauses leaf 0; a leaf port on leaf1~spine0
  // pauses spine 0.
  const Topology topology(small_packet_fabric(4, 2));
  const std::string text = run_isolated([&] {
    HybridEngine engine(topology, 7);
    std::ostringstream out;
    engine.start_pfc_storm_from_endpoint(0, 10 * kMillisecond);
    // 2 -> 1 enters leaf 0; 2 -> 3 stays under leaf 1.
    out << engine.at_packet_level(2, 1) << engine.at_packet_level(2, 3);
    engine.run_until(11 * kMillisecond);
    out << engine.at_packet_level(2, 1);
    engine.start_pfc_storm_from_leaf(topology.fabric_link(1, 0), 20 * kMillisecond);
    // Every leaf-to-leaf route through spine 0 feeds it; within a leaf none does.
    bool through_spine0 = false, through_spine1 = false;
    for (EndpointId src : {0, 1})
      for (EndpointId dst : {2, 3}) {
        const std::vector<LinkId> path = engine.route(src, dst);
        const bool spine0 = std::find(path.begin(), path.end(), topology.fabric_link(0, 0)) != path.end();
        (spine0 ? through_spine0 : through_spine1) = true;
        out << (engine.at_packet_level(src, dst) == spine0);
      }
    out << engine.at_packet_level(0, 1) << through_spine0 << through_spine1;
    return out.str();
  });
  EXPECT_EQ(text,
            "100"
            "1111"
            "011");
}

TEST(HybridEngine, AStormLongerThanTheBatchHorizonHoldsItsTransfersToItsEnd) {
  // The flow engine knows no storms: a transfer the storm still holds at
  // the horizon goes on in a new batch, not at flow level.
  const Topology topology(small_packet_fabric());
  HybridParams params;
  params.batch_horizon = 2 * kMillisecond;
  const Nanos storm_end = 5 * kMillisecond;
  const std::string text = run_isolated([&] {
    HybridEngine engine(topology, 4, params);
    engine.start_pfc_storm_from_endpoint(2, storm_end);
    Nanos stormed = -1;
    engine.start_transfer(0, 2, 4e6, [&](Nanos at) { stormed = at; });
    engine.run_until(20 * kMillisecond);
    return std::to_string(stormed) + " " + std::to_string(engine.packet_batches());
  });
  std::istringstream in(text);
  Nanos stormed = 0;
  std::uint64_t batches = 0;
  in >> stormed >> batches;
  const double lone_ns = 4e6 / kLineRate * 1e9;
  EXPECT_GE(stormed, storm_end);
  EXPECT_LT(static_cast<double>(stormed), static_cast<double>(storm_end) + 3 * lone_ns);
  EXPECT_EQ(batches, 3u);  // 0-2 ms, 2-4 ms, 4 ms until delivered
}

TEST(HybridEngine, ASetSimulatedApartSplitsBetweenABatchAndTheFlowEngine) {
  const Topology topology(small_packet_fabric());
  const std::vector<TransferRequest> set = {{0, 2, 16e6}, {1, 3, 16e6}};
  const std::string flow = run_isolated([&] {
    FlowEngine engine(topology, 3);
    return std::to_string(engine.simulate_apart({set[1]}, kSecond)->at(0));
  });
  const std::string text = run_isolated([&] {
    HybridEngine engine(topology, 3);
    engine.set_link_loss(topology.host_link(0), "f1", 0.01);
    const std::optional<std::vector<Nanos>> offsets = engine.simulate_apart(set, 2 * kSecond);
    std::ostringstream out;
    out << (offsets ? offsets->at(0) : -1) << " " << (offsets ? offsets->at(1) : -1) << " " << engine.now() << " "
        << engine.packet_batches() << " ";
    engine.run_until(3 * kSecond);  // the batch's counters count from its end
    out << engine.rnic_counters(0).retransmitted_packets << " " << engine.rnic_counters(1).tx_packets;
    return out.str();
  });
  std::istringstream in(text);
  Nanos lossy = 0, clean = 0, now = -1;
  std::uint64_t batches = 0, resent = 0, clean_packets = 1;
  in >> lossy >> clean >> now >> batches >> resent >> clean_packets;
  EXPECT_EQ(std::to_string(clean), flow);  // the flow engine's outcome apart
  EXPECT_GT(static_cast<double>(lossy), 1.2 * static_cast<double>(clean));
  EXPECT_EQ(now, 0);  // computed apart: the clock has not moved
  EXPECT_EQ(batches, 1u);
  EXPECT_GT(resent, 0u);
  EXPECT_EQ(clean_packets, 0u);  // 1 -> 3 never went to packets
}

TEST(HybridEngine, SameSeedSameResults) {
  const Topology topology(small_packet_fabric());
  const std::string a = run_isolated([&] { return lossy_run<HybridEngine>(topology); });
  const std::string b = run_isolated([&] { return lossy_run<HybridEngine>(topology); });
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace gauntlet::sim
