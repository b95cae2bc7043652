// The two engines side by side on one small scenario: they agree where both
// model the same physics (healthy steps, a background load's share of a
// link) and the packet engine alone counts what only packets show.
#include "harness/runner/engine_comparison.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

#include "harness/scenario/loader.hpp"

namespace gauntlet::harness {
namespace {

// Four hosts, two rails, 20 ms steps: the engine comparisons' cluster.
std::string small_scenario(const std::string& name, const std::string& duration, const std::string& gradient_bytes,
                           const std::string& faults) {
  return "name: " + name + R"(
seed: 5
duration: )" +
         duration + R"(
cluster: {spines: 2, leaves: 4, hosts: 4, gpus_per_host: 2, rnics_per_host: 2}
job:
  name: llm
  gpus: 8
  parallelism: {tp: 2, pp: 1, dp: 4, ep: 1}
  compute_per_iteration: 20ms
  gradient_bytes: )" +
         gradient_bytes + R"(
  checkpoint_interval: 10m
  restart_cost: 1m
faults:
)" + faults;
}

const std::string kScenario =
    small_scenario("compare", "3s", "512KB",
                   "  - {type: link_loss, target: h1.nic0~leaf0, at: 1s, duration: 1s, rate: 0.01}\n"
                   "  - {type: congestion, target: leaf0~spine0, at: 2s, duration: 1s, load: 0.7}\n");

// Each run costs seconds of packets, so one test reads one comparison.
TEST(EngineComparison, AgreeOnSharedPhysicsAndOnlyPacketsCountWhatOnlyPacketsShow) {
  const EngineComparison comparison = compare_engines(parse_scenario(kScenario, "compare.yaml", builtin_detectors()));

  // The windows: the healthy stretch, then each fault's.
  const std::vector<ComparedWindow>& w = comparison.windows;
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].label, "healthy");
  EXPECT_EQ(w[0].end, sim::kSecond);
  EXPECT_EQ(w[1].label, "f1 link_loss h1.nic0~leaf0");
  EXPECT_EQ(w[2].start, 2 * sim::kSecond);
  EXPECT_EQ(w[2].end, 3 * sim::kSecond);

  // Healthy steps take the same time on both.
  const ComparedWindow& healthy = w[0];
  ASSERT_GT(healthy.flow.iterations, 0u);
  ASSERT_TRUE(iteration_gap(healthy));
  EXPECT_LT(std::abs(*iteration_gap(healthy)), 0.05);

  // Only the packet engine counts a lossy link's errors and resends.
  const ComparedWindow& loss = w[1];
  EXPECT_EQ(loss.flow.counters.count("crc_errors") ? loss.flow.counters.at("crc_errors") : 0u, 0u);
  ASSERT_TRUE(loss.packet.counters.count("crc_errors"));
  EXPECT_GT(loss.packet.counters.at("crc_errors"), 0u);
  EXPECT_GT(loss.packet.counters.at("retransmitted"), loss.packet.counters.at("crc_errors"));

  // Both put the background load on the congested link.
  const ComparedWindow& congested = w[2];
  for (const EngineWindowMeasure* m : {&congested.flow, &congested.packet}) {
    ASSERT_FALSE(m->busiest.empty());
    EXPECT_EQ(m->busiest[0].link.rfind("leaf0~spine0", 0), 0u) << m->busiest[0].link;
    // 70% of the line rate is other tenants' traffic; the job adds little.
    EXPECT_NEAR(m->busiest[0].utilization, 0.7, 0.05);
  }
}

// The hybrid engine against the full packet run, congestion first so that
// no iteration a loss stalls reaches into its window. Healthy, the hybrid
// is the flow engine to the digit; under congestion its iterations are
// within 10% of the packet engine's. Under 1% loss both wait out RoCE's
// adaptive retransmission timeout (1.05 ms first) whenever a message loses
// its last packet, so the mean and the median step are both within 10%. Per iteration the lossy link costs as
// many CRC errors, and each error as many resent packets (go-back-N), as on
// packets, within 25%.
TEST(EngineComparison, HybridIsFlowWhenHealthyAndNearPacketsInFaultWindows) {
  const std::string text =
      small_scenario("compare-hybrid", "3s", "512KB",
                     "  - {type: congestion, target: leaf0~spine0, at: 1s, duration: 1s, load: 0.7}\n"
                     "  - {type: link_loss, target: h1.nic0~leaf0, at: 2s, duration: 1s, rate: 0.01}\n");
  const EngineComparison comparison =
      compare_engines(parse_scenario(text, "hybrid.yaml", builtin_detectors()), /*hybrid=*/true);
  const std::vector<ComparedWindow>& w = comparison.windows;
  ASSERT_EQ(w.size(), 3u);
  for (const ComparedWindow& window : w) ASSERT_TRUE(window.hybrid.has_value()) << window.label;
  EXPECT_EQ(w[0].hybrid->iteration_s, w[0].flow.iteration_s);
  EXPECT_EQ(w[0].hybrid->iterations, w[0].flow.iterations);

  ASSERT_TRUE(hybrid_error(w[1]));
  EXPECT_LT(std::abs(*hybrid_error(w[1])), 0.10);
  ASSERT_FALSE(w[1].hybrid->busiest.empty());
  EXPECT_EQ(w[1].hybrid->busiest[0].link.rfind("leaf0~spine0", 0), 0u) << w[1].hybrid->busiest[0].link;

  const EngineWindowMeasure& packet = w[2].packet;
  const EngineWindowMeasure& hybrid = *w[2].hybrid;
  for (const EngineWindowMeasure* m : {&packet, &hybrid})
    for (const char* counter : {"crc_errors", "retransmitted", "naks_sent", "timeouts"})
      ASSERT_GT(m->counters.count(counter) ? m->counters.at(counter) : 0u, 0u) << counter;
  ASSERT_GT(packet.median_iteration_s, 0);
  EXPECT_NEAR(hybrid.median_iteration_s, packet.median_iteration_s, 0.10 * packet.median_iteration_s);
  EXPECT_NEAR(hybrid.iteration_s, packet.iteration_s, 0.10 * packet.iteration_s);
  auto per_iteration = [](const EngineWindowMeasure& m, const char* counter) {
    return static_cast<double>(m.counters.at(counter)) / static_cast<double>(m.iterations);
  };
  EXPECT_NEAR(per_iteration(hybrid, "crc_errors"), per_iteration(packet, "crc_errors"),
              0.25 * per_iteration(packet, "crc_errors"));
  auto resent_per_error = [](const EngineWindowMeasure& m) {
    return static_cast<double>(m.counters.at("retransmitted")) / static_cast<double>(m.counters.at("crc_errors"));
  };
  EXPECT_NEAR(resent_per_error(hybrid), resent_per_error(packet), 0.25 * resent_per_error(packet));
}

// A host port down 0.4 s twice. Both engines stall the ring while it is
// down; on packets each outage also costs the frames it caught, resent one
// retransmission timeout after the last acknowledgement, and the
// job runs on after the second outage as after the first. Each ring edge
// carries 3 MB, so what its sender sends toward the down port over two
// outages is more than a leaf's ingress queue may hold before it pauses.
TEST(EngineComparison, APortFlappingTwiceStallsBothEnginesAndTheJobRunsOn) {
  const std::string scenario = small_scenario("compare-flap", "4s", "2MB",
                                              "  - {type: port_flap, target: h1.nic0~leaf0, at: 1s, duration: 3s,"
                                              " period: 1500ms, down: 400ms}\n");
  const EngineComparison comparison = compare_engines(parse_scenario(scenario, "flap.yaml", builtin_detectors()));
  ASSERT_EQ(comparison.windows.size(), 2u);
  const ComparedWindow& flap = comparison.windows[1];
  const double window = sim::to_seconds(flap.end - flap.start);
  const double outages = 2 * 0.4, timeouts = 2 * 0.536;
  for (const EngineWindowMeasure* m : {&flap.flow, &flap.packet}) {
    ASSERT_GT(m->iterations, 0u);
    // The iterations it overlaps fill the window: none hangs.
    EXPECT_GT(m->iteration_s * static_cast<double>(m->iterations), window - 0.05);
  }
  // The flow engine stalls for the outages alone. On packets a sender
  // resends at its first timeout past the outage, counted from its last
  // acknowledgement, which came before the outage or, for a message posted
  // during it, when it was posted. The adaptive timeouts (1.05 ms doubling)
  // fire 1.05 x (2^n - 1) ms after it; the first past 400 ms is the ninth,
  // 536 ms: each outage stalls the ring between 536 ms and 400 + 536 ms.
  const double healthy = comparison.windows[0].flow.iteration_s;
  EXPECT_NEAR(static_cast<double>(flap.flow.iterations), (window - outages) / healthy, 3);
  EXPECT_LE(static_cast<double>(flap.packet.iterations), (window - timeouts) / healthy + 3);
  EXPECT_GE(static_cast<double>(flap.packet.iterations), (window - outages - timeouts) / healthy - 3);
  EXPECT_GE(flap.packet.counters.at("timeouts"), 2u);
  EXPECT_EQ(flap.packet.counters.at("pause_sent"), 0u);  // frames for the down port are dropped, not held
  EXPECT_GT(flap.packet.counters.at("drops"), 0u);
}

// An RNIC pausing its leaf for 2 s, longer than a hybrid batch's 1 s
// horizon: on packets the synchronous step waits out the whole storm, and
// the hybrid, whose batches hold the stormed transfers until it ends, too.
// (A batch's counters count at its end: the window spans whole seconds.)
TEST(EngineComparison, HybridWaitsOutAStormLongerThanItsBatchHorizonAsPacketsDo) {
  const std::string scenario =
      "engine: packet\n" +
      small_scenario("compare-storm", "4s", "512KB", "  - {type: pfc_storm, target: h3.nic1, at: 1s, duration: 2s}\n");
  const EngineComparison comparison =
      compare_engines(parse_scenario(scenario, "storm.yaml", builtin_detectors()), /*hybrid=*/true);
  ASSERT_EQ(comparison.windows.size(), 2u);
  const ComparedWindow& storm = comparison.windows[1];
  ASSERT_TRUE(storm.hybrid.has_value());
  const EngineWindowMeasure& packet = storm.packet;
  const EngineWindowMeasure& hybrid = *storm.hybrid;
  EXPECT_GT(packet.iteration_s, 1.9);  // one step held for the storm
  EXPECT_NEAR(hybrid.iteration_s, packet.iteration_s, 0.10 * packet.iteration_s);
  for (const EngineWindowMeasure* m : {&packet, &hybrid}) EXPECT_GT(m->counters.at("pause_sent"), 0u);
  EXPECT_LT(storm.flow.iteration_s, 0.1);  // the flow engine acts out no storm
}

// The ladders' cluster and job (scenarios/packet/ladder-loss.yaml and
// ladder-congestion.yaml): one spine, so two of the data-parallel ring's
// four 6 MB edges cross leaf0~spine0 whatever the seed; communication is
// ~20% of a 0.66 ms step.
std::string ladder_scenario(const std::string& name, const std::string& duration, const std::string& faults) {
  return "name: " + name + "\nseed: 5\nduration: " + duration + R"(
cluster: {spines: 1, leaves: 2, hosts: 4, gpus_per_host: 1, rnics_per_host: 1, rail_optimized: false}
job:
  name: llm
  gpus: 4
  parallelism: {tp: 1, pp: 1, dp: 4, ep: 1}
  compute_per_iteration: 500us
  gradient_bytes: 4MB
  checkpoint_interval: 10m
  restart_cost: 1m
faults:
)" + faults;
}

// The loss ladder's top rung, shortened: at 1% about one message in six
// crossing the link waits out a retransmission timeout on packets (a hole
// whose NAK or resend is lost near the message's end, or a lost last
// packet), a 1.05 ms stall on a 0.8 ms step. The flow engine draws those
// timeouts per transfer (models/roce_transport.hpp); with only the table's
// long-stream goodput its mean step was 30% short of the packets' while its
// median agreed (2026-12-08, the full ladder, seed 5).
TEST(EngineComparison, LossLadderTopRungFlowStepsWithinFifteenPercentOfPackets) {
  const std::string text =
      ladder_scenario("ladder-loss-short", "1s",
                      "  - {type: link_loss, target: leaf0~spine0, at: 200ms, duration: 600ms, rate: 0.01}\n");
  const EngineComparison comparison = compare_engines(parse_scenario(text, "loss.yaml", builtin_detectors()));
  ASSERT_EQ(comparison.windows.size(), 2u);
  const ComparedWindow& loss = comparison.windows[1];
  // The stalls reach the mean, not the median, on both. (The window is
  // shorter than a counter sample: timeouts are not counted in it.)
  EXPECT_GT(loss.packet.iteration_s, 1.15 * loss.packet.median_iteration_s);
  EXPECT_GT(loss.flow.iteration_s, 1.15 * loss.flow.median_iteration_s);
  const std::optional<Agreement> flow = flow_agreement(loss);
  ASSERT_TRUE(flow);
  EXPECT_TRUE(flow->within()) << "mean " << flow->mean_error << ", median " << flow->median_error;
}

// The congestion ladder's top rung, shortened: other tenants at 0.9 of
// leaf0~spine0. The hybrid runs the ring edges crossing it as packets and
// keeps within 10% of the packet run. (The flow engine does not: it gives
// the job the capacity the tenants leave, where DCQCN under ConnectX's
// defaults leaves it less; docs/engines.md, The ladders.)
TEST(EngineComparison, CongestionLadderTopRungHybridStepsWithinTenPercentOfPackets) {
  const std::string text =
      ladder_scenario("ladder-congestion-short", "500ms",
                      "  - {type: congestion, target: leaf0~spine0, at: 200ms, duration: 300ms, load: 0.9}\n");
  const EngineComparison comparison =
      compare_engines(parse_scenario(text, "congestion.yaml", builtin_detectors()), /*hybrid=*/true);
  ASSERT_EQ(comparison.windows.size(), 2u);
  const std::optional<Agreement> hybrid = hybrid_agreement(comparison.windows[1]);
  ASSERT_TRUE(hybrid);
  EXPECT_TRUE(hybrid->within()) << "mean " << hybrid->mean_error << ", median " << hybrid->median_error;
  EXPECT_EQ(hybrid->band, kHybridAgreementBand);
}

}  // namespace
}  // namespace gauntlet::harness
