// The skeleton and pingmesh probers on small simulated clusters, through the
// real runner (each simulation in a forked child: one engine per process).
#include "harness/detectors/skeleton_detector.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "harness/detectors/registry.hpp"
#include "harness/runner/simulation.hpp"
#include "harness/scenario/loader.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::harness {
namespace {

// 4 hosts in two pods, 2 GPUs and 2 RNICs each (rail leaves 0,1 in pod 0 and
// 2,3 in pod 1, two spines); DP rings h0 -> h1 -> h2 -> h3 -> h0 per rail.
std::string scenario_text(const std::string& faults, const std::string& detectors) {
  return R"(name: probing
seed: 3
duration: 4m
engine: flow
cluster: {spines: 2, leaves: 4, hosts: 4, gpus_per_host: 2, rnics_per_host: 2, rail_optimized: true,
          host_link_gbps: 400, fabric_link_gbps: 400, link_latency: 1us}
job: {name: small, gpus: 8, parallelism: {tp: 2, pp: 1, dp: 4, ep: 1}, compute_per_iteration: 2s,
      gradient_bytes: 1GB, checkpoint_interval: 10m, restart_cost: 1m}
faults:
)" + faults +
         "\ndetectors: " + detectors + "\nmitigation: none\n";
}

SimulationOutcome run(const std::string& faults, const std::string& detectors = "[skeleton, pingmesh]") {
  const std::string text = scenario_text(faults, detectors);
  return SimulationOutcome::from_json(sim::run_isolated([&] {
    const DetectorRegistry registry = builtin_detectors();
    const Scenario scenario = parse_scenario(text, "probing.yaml", registry);
    return simulate(scenario, registry, SimulationRequest{}).to_json();
  }));
}

std::vector<Alert> alerts_of(const SimulationOutcome& o, const std::string& detector, const std::string& kind) {
  std::vector<Alert> out;
  for (const Alert& a : o.detectors.at(detector).alerts)
    if (a.kind == kind) out.push_back(a);
  return out;
}

bool in_top(const Alert& a, const std::string& id, std::size_t k) {
  for (std::size_t i = 0; i < a.suspects.size() && i < k; ++i)
    if (a.suspects[i].id == id) return true;
  return false;
}

TEST(SkeletonDetectorRun, StaleFlowTableIsTheFlowTableNotALinkAndPingmeshMissesIt) {
  const SimulationOutcome o =
      run("  - {type: stale_flow_table, target: h1.nic0.ft, at: 90s, duration: 2m, extra_latency: 104us}");
  const auto skeleton = alerts_of(o, "skeleton", "network");
  ASSERT_FALSE(skeleton.empty());
  EXPECT_EQ(skeleton.front().suspects.front().id, "h1.nic0.ft");
  EXPECT_GE(skeleton.front().time_s, 90.0);
  EXPECT_LE(skeleton.front().time_s, 90.0 + 3 * 30.0);
  for (const Alert& a : skeleton)
    for (const Suspect& s : a.suspects) EXPECT_EQ(s.id.find('~'), std::string::npos) << "a link blamed: " << s.id;
  EXPECT_GT(o.detectors.at("skeleton").probes_sent, 0);
  // Pingmesh probes only the underlay, which the stale entry never slows.
  EXPECT_GT(o.detectors.at("pingmesh").probes_sent, 0);
  EXPECT_TRUE(o.detectors.at("pingmesh").alerts.empty());
}

// Under seed 3 ECMP routes rail 0's cross-pod ring edge over spine 1. With two
// pods every ring path through leaf0~spine1 also crosses leaf2~spine1, so the
// ring's probes tie the two; the skeleton's identifying probes from leaf0 to
// leaf1 (and from leaf2 to leaf3) cross one of them each and split the tie.
// Pingmesh's inter-ToR sample crosses other leaves of spine 1 and names it too.
TEST(SkeletonDetectorRun, LossyFabricLinkOnTheRingPath) {
  const SimulationOutcome o = run("  - {type: link_loss, target: leaf0~spine1, at: 90s, duration: 2m, rate: 0.05}");
  const auto skeleton = alerts_of(o, "skeleton", "network");
  ASSERT_FALSE(skeleton.empty());
  ASSERT_GE(skeleton.front().suspects.size(), 2u);
  EXPECT_EQ(skeleton.front().suspects[0].id, "leaf0~spine1");
  EXPECT_GT(skeleton.front().suspects[0].score, skeleton.front().suspects[1].score);
  EXPECT_GE(skeleton.front().time_s, 90.0);
  EXPECT_LE(skeleton.front().time_s, 90.0 + 2 * 30.0 + 5);
  for (const Suspect& s : skeleton.front().suspects) EXPECT_EQ(s.id.find(".ft"), std::string::npos);
  const auto pingmesh = alerts_of(o, "pingmesh", "network");
  ASSERT_FALSE(pingmesh.empty());
  EXPECT_EQ(pingmesh.front().suspects.front().id, "leaf0~spine1");
}

// The same fault with the identifying probes off: the ring's probes leave the
// two links tied on top.
TEST(SkeletonDetectorRun, WithoutIdentifyingProbesTheRingsFabricLinksTie) {
  const SimulationOutcome o = run("  - {type: link_loss, target: leaf0~spine1, at: 90s, duration: 2m, rate: 0.05}",
                                  "[{name: skeleton, tie_rounds: 0}]");
  const auto skeleton = alerts_of(o, "skeleton", "network");
  ASSERT_FALSE(skeleton.empty());
  ASSERT_GE(skeleton.front().suspects.size(), 2u);
  const std::set<std::string> top{skeleton.front().suspects[0].id, skeleton.front().suspects[1].id};
  EXPECT_EQ(top, (std::set<std::string>{"leaf0~spine1", "leaf2~spine1"}));
  EXPECT_EQ(skeleton.front().suspects[0].score, skeleton.front().suspects[1].score);
}

// Background traffic on the ring's cross-pod link: its probes come back
// later than their best (here about 0.36 us: they wait in its queue) but
// none is lost, and its ports report the queue; its path partner
// leaf2~spine1 queues nothing.
TEST(SkeletonDetectorRun, CongestedFabricLinkIsThatLink) {
  const SimulationOutcome o =
      run("  - {type: congestion, target: leaf0~spine1, at: 90s, duration: 2m, load: 0.8}", "[skeleton]");
  const auto network = alerts_of(o, "skeleton", "network");
  ASSERT_EQ(network.size(), 1u);
  EXPECT_EQ(network.front().suspects.front().id, "leaf0~spine1");
  for (std::size_t i = 1; i < network.front().suspects.size(); ++i)
    EXPECT_LT(network.front().suspects[i].score, network.front().suspects.front().score);
  // The first round's late probes, then a second analysis that still sees
  // them: at most three rounds after the onset.
  EXPECT_GE(network.front().time_s, 90.0 + 30.0);
  EXPECT_LE(network.front().time_s, 90.0 + 3 * 30.0);
}

// A congested spine queues on both of the ring's links through it alike.
TEST(SkeletonDetectorRun, CongestedSpineIsTheSpine) {
  const SimulationOutcome o =
      run("  - {type: congestion, target: spine1, at: 90s, duration: 2m, load: 0.8}", "[skeleton]");
  const auto network = alerts_of(o, "skeleton", "network");
  ASSERT_EQ(network.size(), 1u);
  EXPECT_EQ(network.front().suspects.front().id, "spine1");
  ASSERT_GE(network.front().suspects.size(), 2u);
  EXPECT_GT(network.front().suspects[0].score, network.front().suspects[1].score);
}

// The suite's background congestion (5-20% load) delays the ring's probes
// by tens of nanoseconds (about 40 ns here), below the margin; with a margin
// under that the same delay and queue are named, so the default's silence is
// the margin's, not blindness.
TEST(SkeletonDetectorRun, LightCongestionIsBelowTheMargin) {
  const std::string faults =
      "  - {type: congestion, target: leaf0~spine1, at: 60s, duration: 2m, load: 0.2}\n"
      "  - {type: congestion, target: h1.nic0~leaf0, at: 60s, duration: 2m, load: 0.2}";
  EXPECT_TRUE(run(faults, "[skeleton]").detectors.at("skeleton").alerts.empty());
  const auto fine = alerts_of(run(faults, "[{name: skeleton, congestion_margin: 20ns}]"), "skeleton", "network");
  ASSERT_FALSE(fine.empty());
  EXPECT_EQ(fine.front().suspects.front().id, "leaf0~spine1");
}

TEST(SkeletonDetectorRun, SilentAgentIsAMonitorAlertNotANetworkFault) {
  const SimulationOutcome o = run("  - {type: agent_hang, target: h2.agent, at: 60s, duration: 2m}", "[skeleton]");
  const auto monitor = alerts_of(o, "skeleton", "monitor");
  ASSERT_EQ(monitor.size(), 1u);
  EXPECT_EQ(monitor.front().suspects.front().id, "h2.agent");
  // The last heartbeat left at 50 s; silence beyond three 10 s intervals,
  // then one ping train (2 s) to its RNICs, which answer.
  EXPECT_GT(monitor.front().time_s, 80.0);
  EXPECT_LE(monitor.front().time_s, 84.0);
  EXPECT_TRUE(alerts_of(o, "skeleton", "fail_stop").empty());
  EXPECT_TRUE(alerts_of(o, "skeleton", "network").empty());
}

// Silent like a hung agent, but its RNICs answer no peer: the host is down,
// and its dark host links are its own, not a network fault.
TEST(SkeletonDetectorRun, SilentHostWhoseRnicsDoNotAnswerIsDown) {
  const SimulationOutcome o = run("  - {type: node_crash, target: h2, at: 60s}", "[skeleton]");
  const std::vector<Alert>& alerts = o.detectors.at("skeleton").alerts;
  ASSERT_FALSE(alerts.empty());
  EXPECT_EQ(alerts.front().kind, "fail_stop");
  EXPECT_EQ(alerts.front().suspects.front().id, "h2");
  EXPECT_LE(alerts.front().time_s, 60.0 + 30 + 4);
  EXPECT_TRUE(alerts_of(o, "skeleton", "monitor").empty());
}

// The host link of h1.nic1 goes dark and NCCL moves its ring edge to h1.nic0:
// the flow tables say the RNIC was abandoned, so it is named before its link.
TEST(SkeletonDetectorRun, DarkHostLinkWhoseTrafficFellBackNamesTheRnic) {
  const SimulationOutcome o = run("  - {type: nic_down, target: h1.nic1, at: 60s, duration: 2m}", "[skeleton]");
  const auto network = alerts_of(o, "skeleton", "network");
  ASSERT_FALSE(network.empty());
  ASSERT_GE(network.front().suspects.size(), 2u);
  EXPECT_EQ(network.front().suspects[0].id, "h1.nic1");
  EXPECT_EQ(network.front().suspects[1].id, "h1.nic1~leaf1");
  EXPECT_GT(network.front().suspects[0].score, network.front().suspects[1].score);
}

// Pingmesh sees no agent: every probe to each of a host's RNICs failing is
// the server, ranked above the host link that carried most failures.
TEST(PingmeshDetectorRun, AHostWhoseEveryRnicIsUnreachableIsTheHost) {
  const SimulationOutcome o = run("  - {type: node_crash, target: h2, at: 60s}", "[pingmesh]");
  const auto network = alerts_of(o, "pingmesh", "network");
  ASSERT_FALSE(network.empty());
  EXPECT_EQ(network.front().suspects.front().id, "h2");
  ASSERT_GE(network.front().suspects.size(), 2u);
  EXPECT_GT(network.front().suspects[0].score, network.front().suspects[1].score);
}

TEST(ProbingDetectorsRegistry, DefaultsResolveAndBadValuesAreRefused) {
  const DetectorRegistry registry = builtin_detectors();
  const DetectorInfo* skeleton = registry.find("skeleton");
  const DetectorInfo* pingmesh = registry.find("pingmesh");
  ASSERT_TRUE(skeleton);
  ASSERT_TRUE(pingmesh);
  std::string error;
  auto s = registry.resolve(*skeleton, {{"budget", "64"}}, &error);
  ASSERT_TRUE(s) << error;
  const SkeletonDetector::Config c = SkeletonDetector::config_from(*s);
  EXPECT_EQ(c.budget, 64);
  EXPECT_EQ(c.round, 30 * sim::kSecond);
  EXPECT_EQ(c.rtt_margin, 50 * sim::kMicrosecond);
  auto p = registry.resolve(*pingmesh, {}, &error);
  ASSERT_TRUE(p) << error;
  // Far above any healthy underlay RTT (10-14 us); a stale flow table's
  // 120 us shows only on the overlay, which pingmesh never probes.
  EXPECT_EQ(p->duration("rtt_threshold"), 100 * sim::kMicrosecond);
  EXPECT_FALSE(registry.resolve(*skeleton, {{"budget", "0"}}, &error));
  EXPECT_FALSE(registry.resolve(*pingmesh, {{"rnic_fraction", "2"}}, &error));
}

TEST(SkeletonDetectorRun, NoFaultNoAlert) {
  const SimulationOutcome o = run("  []");
  EXPECT_TRUE(o.detectors.at("skeleton").alerts.empty());
  EXPECT_TRUE(o.detectors.at("pingmesh").alerts.empty());
}

}  // namespace
}  // namespace gauntlet::harness
