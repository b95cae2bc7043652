// A NIC's PFC pause storm spreading through the fabric, and the watchdogs
// that stop it, after Guo et al., "RDMA over Commodity Ethernet at Scale"
// (SIGCOMM 2016):
// - Figure 5 and section 4.3: one NIC that keeps pausing its ToR stops the
//   ToR's port toward it; the ToR's buffer fills and it pauses its uplinks,
//   the tier above fills and pauses the other ToRs, which pause their
//   servers: traffic that never touches the NIC stops, tier by tier, for
//   as long as the storm lasts.
// - Section 4.3: the two watchdogs. The switch's, on a queue its peer keeps
//   paused while it cannot send, stops honouring the pauses and drops the
//   lossless traffic to and from that port until the pauses stop; the
//   NIC's stops the NIC pausing once its receive pipeline stalled for a
//   while (100 ms by default there). The paper gives no recovery figure;
//   what is checked is its claim that the watchdogs keep the storm from
//   hurting the rest of the network: innocent traffic resumes about one
//   detection time into the storm, not when it ends.
// The switch watchdog's defaults are SONiC's (200 ms detection, 200 ms
// restoration, drop; models/pfc_watchdog_calibration.hpp).
#include <gtest/gtest.h>

#include <cstdio>

#include "sim/packet/packet_engine.hpp"

namespace gauntlet::sim {
namespace {

constexpr Nanos kStorm = kSecond;  // the storm's length, from t = 0
constexpr Nanos kMs = kMillisecond;

// Two leaves of three 400 Gb/s hosts under one spine: every path between
// the leaves crosses it, so the tiers are one port each.
ClusterShape two_tier_fabric() {
  ClusterShape s;
  s.spines = 1;
  s.leaves = 2;
  s.hosts = 6;
  s.gpus_per_host = 1;
  s.rnics_per_host = 1;
  s.rail_optimized = false;
  s.host_link_gbps = 400;
  s.fabric_link_gbps = 400;
  s.link_latency = kMicrosecond;
  return s;
}

// Endpoint 0 (leaf 0) storms for 1 s. Endpoints 3 and 4 (leaf 1) send it
// 32 MB each, enough to fill a queue at every tier on the way; 50 ms in,
// once the storm has spread, endpoint 5 (leaf 1) sends 1 MB to endpoint 1
// (leaf 0), never touching endpoint 0.
struct StormRun {
  Nanos victim_done = -1;
  // Time each tier's port had its lossless class paused by the tier below,
  // by the storm's end: leaf 0 toward the NIC, the spine toward leaf 0,
  // leaf 1 toward the spine, endpoint 3's NIC toward leaf 1.
  Nanos paused[4] = {};
  Nanos paused_early[4] = {};  // the same 250 ms into the storm
  PacketPortCounters stormed;  // leaf 0's port toward the storming NIC
  PacketRnicCounters stormer;
};

StormRun run_storm(const RoceParams& params) {
  const Topology topology(two_tier_fabric());
  PacketEngine engine(topology, 11, params);
  StormRun run;
  engine.start_pfc_storm_from_endpoint(0, kStorm);
  engine.start_transfer(3, 0, 32e6, nullptr);
  engine.start_transfer(4, 0, 32e6, nullptr);
  engine.schedule_at(50 * kMs, [&] { engine.start_transfer(5, 1, 1e6, [&](Nanos at) { run.victim_done = at; }); });
  const auto tiers = [&](Nanos* out) {
    out[0] = engine.port_counters(topology.host_link(0), false).paused_ns;
    out[1] = engine.port_counters(topology.fabric_link(0, 0), false).paused_ns;
    out[2] = engine.port_counters(topology.fabric_link(1, 0), true).paused_ns;
    out[3] = engine.port_counters(topology.host_link(3), true).paused_ns;
  };
  engine.schedule_at(250 * kMs, [&] { tiers(run.paused_early); });
  engine.schedule_at(kStorm, [&] { tiers(run.paused); });
  engine.run_until(kStorm + 500 * kMs);
  run.stormed = engine.port_counters(topology.host_link(0), false);
  run.stormer = engine.rnic_counters(0);
  std::printf("victim done %.3f ms; paused by the storm's end (at 250 ms), ms:", to_seconds(run.victim_done) * 1e3);
  for (int tier = 0; tier < 4; ++tier)
    std::printf(" %.3f (%.3f)", to_seconds(run.paused[tier]) * 1e3, to_seconds(run.paused_early[tier]) * 1e3);
  std::printf("; detected %llu restored %llu tx dropped %llu rx dropped %llu; NIC stalls %llu\n",
              static_cast<unsigned long long>(run.stormed.pfcwd_detected),
              static_cast<unsigned long long>(run.stormed.pfcwd_restored),
              static_cast<unsigned long long>(run.stormed.pfcwd_tx_dropped),
              static_cast<unsigned long long>(run.stormed.pfcwd_rx_dropped),
              static_cast<unsigned long long>(run.stormer.pause_storm_errors));
  return run;
}

RoceParams switch_watchdog(bool forward) {
  RoceParams p;
  p.watchdog.switch_enabled = true;  // SONiC's detection and restoration times
  p.watchdog.forward = forward;
  return p;
}

TEST(PfcStorm, WithoutAWatchdogTheStormSpreadsTierByTierForItsWholeLength) {
  RoceParams params;
  params.watchdog.nic_enabled = false;
  const StormRun run = run_storm(params);
  // Figure 5: every tier is paused within the first milliseconds and stays
  // paused until the storm ends; the victim waits it out.
  for (Nanos paused : run.paused) EXPECT_GT(paused, kStorm - 10 * kMs);
  EXPECT_GT(run.victim_done, kStorm);
  EXPECT_EQ(run.stormed.pfcwd_detected, 0u);
  EXPECT_EQ(run.stormer.pause_storm_errors, 0u);
}

TEST(PfcStorm, TheNicWatchdogsDefaultOutlastsAShorterStorm) {
  // ConnectX's default stall timeout is 8 s: a 1 s storm runs as with none.
  const StormRun run = run_storm(RoceParams{});
  for (Nanos paused : run.paused) EXPECT_GT(paused, kStorm - 10 * kMs);
  EXPECT_GT(run.victim_done, kStorm);
  EXPECT_EQ(run.stormer.pause_storm_errors, 0u);
}

TEST(PfcStorm, TheSwitchWatchdogDropsTheStuckQueueAndTheFabricResumesAfterTheDetectionTime) {
  const RoceParams params = switch_watchdog(/*forward=*/false);
  const Nanos detection = params.watchdog.detection_time;
  const StormRun run = run_storm(params);
  // Detected once, at the port toward the stormer, and restored once after
  // the pauses stopped; frames to (and from) the stormer were dropped.
  EXPECT_EQ(run.stormed.pfcwd_detected, 1u);
  EXPECT_EQ(run.stormed.pfcwd_restored, 1u);
  EXPECT_GT(run.stormed.pfcwd_tx_dropped, 0u);
  // The victim resumes a detection time in, not at the storm's end.
  EXPECT_GT(run.victim_done, detection);
  EXPECT_LT(run.victim_done, detection + 20 * kMs);
  // Each tier was paused for about the detection time and no more: the
  // spread stops at the stuck queue for the rest of the storm. (The
  // senders to the stormer, whose frames are now dropped at leaf 0, still
  // meet PFC at their own leaf: two of them at line rate into one uplink,
  // measured 1.06 ms more pause in the 750 ms after 250 ms.)
  for (int tier = 0; tier < 3; ++tier) {
    EXPECT_LT(run.paused[tier], detection + 5 * kMs) << "tier " << tier;
    EXPECT_EQ(run.paused[tier], run.paused_early[tier]) << "tier " << tier;
  }
  EXPECT_LT(run.paused[3], detection + 5 * kMs);
  EXPECT_GT(run.paused[0], detection - kMs);
}

TEST(PfcStorm, UnderTheForwardActionTheStuckQueueSendsThroughThePausesAndDropsNothing) {
  const RoceParams params = switch_watchdog(/*forward=*/true);
  const StormRun run = run_storm(params);
  EXPECT_EQ(run.stormed.pfcwd_detected, 1u);
  EXPECT_EQ(run.stormed.pfcwd_tx_dropped + run.stormed.pfcwd_rx_dropped, 0u);
  EXPECT_GT(run.victim_done, params.watchdog.detection_time);
  EXPECT_LT(run.victim_done, params.watchdog.detection_time + 20 * kMs);
  for (int tier = 1; tier < 4; ++tier) EXPECT_LT(run.paused[tier], params.watchdog.detection_time + 5 * kMs);
}

TEST(PfcStorm, TheNicWatchdogStopsThePausesAfterItsStallTimeout) {
  RoceParams params;
  params.watchdog.nic_stall_timeout = 100 * kMs;  // Guo et al.'s default, mlx5's "auto"
  const StormRun run = run_storm(params);
  EXPECT_EQ(run.stormer.pause_storm_errors, 1u);
  EXPECT_GT(run.victim_done, 100 * kMs);
  EXPECT_LT(run.victim_done, 120 * kMs);
  for (Nanos paused : run.paused) EXPECT_LT(paused, 105 * kMs);
  EXPECT_GT(run.paused[0], 99 * kMs);
}

}  // namespace
}  // namespace gauntlet::sim
