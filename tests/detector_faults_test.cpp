// Reference detectors against single faults on a small simulated cluster:
// which must detect and localize each fault, and which must not.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/detectors/registry.hpp"
#include "harness/runner/runner.hpp"
#include "harness/runner/simulation.hpp"
#include "harness/scenario/loader.hpp"
#include "sim/isolated_run.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness {
namespace {

// 4 hosts x 4 GPUs of one job (tp 4 x dp 4: one data-parallel ring per
// rail), 1 s of compute and a 1 GB allreduce per iteration; the fault runs
// from 2 to 5 minutes of a 7-minute run.
std::string scenario_text(const std::string& fault, const std::string& detectors) {
  return R"(name: detector-faults
seed: 11
duration: 7m
engine: flow
cluster: {spines: 2, leaves: 4, hosts: 5, gpus_per_host: 4, rnics_per_host: 4, rail_optimized: true,
          host_link_gbps: 400, fabric_link_gbps: 400, link_latency: 1us}
job:
  name: small
  gpus: 16
  parallelism: {tp: 4, pp: 1, dp: 4, ep: 1}
  compute_per_iteration: 1s
  gradient_bytes: 1GB
  checkpoint_interval: 30m
  restart_cost: 1m
  spare_hosts: 1
faults:
  - )" + fault +
         R"(
detectors: )" +
         detectors + "\n";
}

SimulationOutcome run(const std::string& fault, const std::string& detectors) {
  const std::string text = scenario_text(fault, detectors);
  return SimulationOutcome::from_json(sim::run_isolated([&] {
    const DetectorRegistry registry = builtin_detectors();
    const Scenario scenario = parse_scenario(text, "detector-faults.yaml", registry);
    return simulate(scenario, registry, SimulationRequest{}).to_json();
  }));
}

// The host link of an RNIC the job's ring of that rail crosses.
std::string host_link(int host, int nic) {
  const DetectorRegistry registry = builtin_detectors();
  const Scenario s = parse_scenario(
      scenario_text("{type: gpu_throttle, target: h1.gpu2, at: 2m, duration: 3m, slowdown: 0.2}", "[c4d]"),
      "detector-faults.yaml", registry);
  const sim::Topology topology(s.cluster);
  return topology.link_name(topology.host_link(topology.endpoint(host, nic)));
}

const Alert* first_alert(const SimulationOutcome& run, const std::string& detector, double after_s = 0) {
  for (const Alert& a : run.detectors.at(detector).alerts)
    if (a.time_s >= after_s) return &a;
  return nullptr;
}

std::string top(const Alert* a) { return a && !a->suspects.empty() ? a->suspects[0].id : ""; }

const std::string kThrottle = "{type: gpu_throttle, target: h1.gpu2, at: 2m, duration: 3m, slowdown: 0.6}";
const std::string kContention = "{type: cpu_contention, target: h1.cpu, at: 2m, duration: 3m, slowdown: 0.3}";
std::string link_loss() {
  return "{type: link_loss, target: " + host_link(1, 2) + ", at: 2m, duration: 3m, rate: 0.05}";
}

TEST(FalconBenchmarks, ThrottledGpuIsConfirmedByItsGemm) {
  const SimulationOutcome out = run(kThrottle, "[falcon]");
  const Alert* a = first_alert(out, "falcon");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->kind, "fail_slow");
  EXPECT_EQ(top(a), "h1.gpu2");
  EXPECT_GE(a->time_s, 120);
  EXPECT_LT(a->time_s, 180);
  const DetectorOutcome& falcon = out.detectors.at("falcon");
  EXPECT_EQ(falcon.benchmarks, 3);           // the healthy GEMM reference early on, then a GEMM and an allreduce round
  EXPECT_GT(falcon.benchmark_pause_s, 0.5);  // a 0.2 s GEMM on a GPU at 40% speed, then the rings
  EXPECT_LT(falcon.benchmark_pause_s, 5);
}

TEST(FalconBenchmarks, BenchmarkPauseStopsTrainingProgress) {
  const SimulationOutcome with = run(kThrottle, "[falcon]");
  const SimulationOutcome without = run(kThrottle, "[{name: falcon, validate: 0}]");
  EXPECT_EQ(without.detectors.at("falcon").benchmarks, 0);
  const DetectorOutcome& falcon = with.detectors.at("falcon");
  // The pause costs its length in iterations at the job's pace then: the run
  // with benchmarks completes that many fewer (within the one iteration the
  // horizon cuts).
  const double fewer = static_cast<double>(without.iterations()) - static_cast<double>(with.iterations());
  EXPECT_NEAR(fewer, falcon.benchmark_pause_iterations, 1.0);
  EXPECT_GT(falcon.benchmark_pause_iterations, 0.1);
}

TEST(FalconBenchmarks, LossyLinkIsCommunication) {
  const SimulationOutcome out = run(link_loss(), "[falcon]");
  const Alert* a = first_alert(out, "falcon");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->kind, "network");
  for (const Suspect& s : a->suspects) EXPECT_EQ(s.id.find(".cpu"), std::string::npos) << s.id;
}

TEST(FalconBenchmarks, CpuContentionIsNotTheGpu) {
  const SimulationOutcome out = run(kContention, "[falcon]");
  const Alert* a = first_alert(out, "falcon");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->kind, "fail_slow");
  EXPECT_EQ(top(a), "h1.cpu");
  for (const Suspect& s : a->suspects) EXPECT_EQ(s.id.find(".gpu"), std::string::npos) << s.id;
  // Without benchmarks the profile alone blames the host's GPUs.
  const SimulationOutcome profile = run(kContention, "[{name: falcon, validate: 0}]");
  EXPECT_EQ(top(first_alert(profile, "falcon")).rfind("h1.gpu", 0), 0u);
}

TEST(C4dEntryTimes, ThrottledGpuEntersLateAndIsComputationSlow) {
  const SimulationOutcome out =
      run("{type: gpu_throttle, target: h1.gpu2, at: 2m, duration: 3m, slowdown: 0.2}", "[c4d]");
  const Alert* a = first_alert(out, "c4d");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->kind, "fail_slow");
  EXPECT_EQ(top(a), "h1.gpu2");
  EXPECT_LT(a->time_s, 120 + 10);
  for (const Alert& alert : out.detectors.at("c4d").alerts) EXPECT_NE(alert.kind, "network");
}

TEST(C4dEntryTimes, LossyLinkIsCommunicationNotComputation) {
  const SimulationOutcome out = run(link_loss(), "[c4d]");
  ASSERT_FALSE(out.detectors.at("c4d").alerts.empty());
  for (const Alert& a : out.detectors.at("c4d").alerts) EXPECT_NE(a.kind, "fail_slow") << top(&a);
  EXPECT_EQ(first_alert(out, "c4d")->kind, "network");
}

// EROICA's window opens at the trigger, not when a steady stretch ends: the
// alert comes one profiling window after the first slow iteration.
TEST(EroicaWindow, OpensAtTheTriggerOnTheScoreboardThrottle) {
  const std::string path = std::string(GAUNTLET_SOURCE_DIR) + "/scenarios/faults/gpu-throttle.yaml";
  const SimulationOutcome out = SimulationOutcome::from_json(sim::run_isolated([&] {
    const DetectorRegistry registry = builtin_detectors();
    const Scenario scenario = load_scenario(path, registry);
    SimulationRequest request;
    request.only_detector = "eroica";
    return simulate(scenario, registry, request).to_json();
  }));
  const Alert* a = first_alert(out, "eroica", 600);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(top(a), "h5.gpu2");
  // The onset meets the job's 5 s checkpoint; then one slow iteration
  // triggers the 60 s window, which closes with the iteration straddling its
  // end. Within three iterations and two observation steps of that.
  const double iteration_s = 2.65, checkpoint_s = 5, window_s = 60;
  EXPECT_GE(a->time_s, 600 + window_s);
  EXPECT_LE(a->time_s, 600 + checkpoint_s + window_s + 3 * iteration_s + 2);
  EXPECT_NEAR(out.detectors.at("eroica").profiling_seconds, window_s, 1e-9);
}

// Two profilers in one scenario (a threshold sweep's copy beside eroica):
// each sees only the windows it opened itself, as it would alone.
TEST(EroicaWindow, ACopyAtAnotherWindowGetsARunOfItsOwn) {
  const DetectorRegistry registry = builtin_detectors();
  const auto report_of = [&](const std::string& detectors) {
    return run_scenario(parse_scenario(scenario_text(kThrottle, detectors), "detector-faults.yaml", registry), registry,
                        RunOptions{});
  };
  const RunReport both = report_of("[eroica, {name: eroica, as: eroica_short, window: 20s}]");
  const RunReport alone = report_of("[{name: eroica, as: eroica_short, window: 20s}]");
  const RunReport own = report_of("[eroica]");
  EXPECT_EQ(both.own_runs.count("eroica"), 0u);  // the first keeps the shared run
  ASSERT_EQ(both.own_runs.count("eroica_short"), 1u);
  const auto& copy = both.faulty.detectors.at("eroica_short");
  const auto& copy_alone = alone.faulty.detectors.at("eroica_short");
  EXPECT_NEAR(copy.profiling_seconds, 20, 1e-9);
  EXPECT_EQ(copy.profiling_seconds, copy_alone.profiling_seconds);
  EXPECT_NEAR(both.faulty.detectors.at("eroica").profiling_seconds, 60, 1e-9);
  ASSERT_FALSE(copy.alerts.empty());
  ASSERT_EQ(copy.alerts.size(), copy_alone.alerts.size());
  for (std::size_t i = 0; i < copy.alerts.size(); ++i) EXPECT_EQ(copy.alerts[i].time_s, copy_alone.alerts[i].time_s);
  ASSERT_EQ(both.faulty.detectors.at("eroica").alerts.size(), own.faulty.detectors.at("eroica").alerts.size());
}

// The scoreboard's single-fault scenarios with every reference detector:
// who must detect or localize each fault, and who must keep quiet.
enum class Must { quiet, detect, localize };
struct Expectation {
  std::string detector;
  Must must;
};

void check_scoreboard_fault(const std::string& name, const std::vector<Expectation>& expectations) {
  const std::string path = std::string(GAUNTLET_SOURCE_DIR) + "/scenarios/faults/" + name + ".yaml";
  const DetectorRegistry registry = builtin_detectors();
  const Scenario scenario = load_scenario(path, registry);
  const SimulationOutcome out = SimulationOutcome::from_json(
      sim::run_isolated([&] { return simulate(scenario, registry, SimulationRequest{}).to_json(); }));
  const injectors::FaultSpec& fault = scenario.faults.at(0);
  const double start = sim::to_seconds(fault.start);
  const double end = sim::to_seconds(fault.end().value_or(scenario.duration)) + 60;  // the scorer's grace
  for (const Expectation& e : expectations) {
    const auto& alerts = out.detectors.at(e.detector).alerts;
    if (e.must == Must::quiet) {
      EXPECT_TRUE(alerts.empty()) << name << ": " << e.detector << " raised " << alerts.size() << " alert(s), first "
                                  << top(&alerts.front());
      continue;
    }
    const Alert* named = nullptr;
    bool detected = false;
    for (const Alert& a : alerts) {
      if (a.time_s < start || a.time_s > end) continue;
      detected = true;
      if (!named && !a.suspects.empty()) named = &a;
    }
    EXPECT_TRUE(detected) << name << ": " << e.detector << " did not detect it";
    if (e.must == Must::localize) {
      EXPECT_EQ(top(named), fault.target) << name << ": " << e.detector;
    }
  }
}

TEST(Scoreboard, AgentHangIsTheAgentNotTheNetwork) {
  check_scoreboard_fault("agent-hang", {{"skeleton", Must::localize},
                                        {"pingmesh", Must::quiet},
                                        {"c4d", Must::quiet},
                                        {"timeout", Must::quiet},
                                        {"falcon", Must::quiet},
                                        {"eroica", Must::quiet}});
}

TEST(Scoreboard, ClockSkewAndReconfigureRaiseNothing) {
  const std::vector<Expectation> nobody = {{"timeout", Must::quiet},  {"falcon", Must::quiet},
                                           {"c4d", Must::quiet},      {"eroica", Must::quiet},
                                           {"skeleton", Must::quiet}, {"pingmesh", Must::quiet}};
  check_scoreboard_fault("clock-skew", nobody);
  check_scoreboard_fault("reconfigure", nobody);
}

TEST(Scoreboard, FailStopIsTheTimeoutsOnlyCatch) {
  check_scoreboard_fault("gpu-fail", {{"timeout", Must::detect}, {"c4d", Must::localize}});
  // The probers name the dead host: skeleton's agent is silent and its RNICs
  // answer no peer; every pingmesh probe to each of its RNICs fails.
  check_scoreboard_fault(
      "node-crash",
      {{"timeout", Must::detect}, {"c4d", Must::localize}, {"skeleton", Must::localize}, {"pingmesh", Must::localize}});
  for (const char* slow : {"gpu-throttle", "cpu-contention", "link-loss", "congestion", "port-flap"})
    check_scoreboard_fault(slow, {{"timeout", Must::quiet}});
}

TEST(Scoreboard, ComputeSlowdownsAreLocalizedByTheProfilers) {
  check_scoreboard_fault("gpu-throttle", {{"falcon", Must::localize},
                                          {"c4d", Must::localize},
                                          {"eroica", Must::localize},
                                          {"skeleton", Must::quiet},
                                          {"pingmesh", Must::quiet}});
  // Falcon's benchmarks and EROICA's function profile both find the CPU, not a GPU.
  check_scoreboard_fault("cpu-contention", {{"falcon", Must::localize},
                                            {"eroica", Must::localize},
                                            {"c4d", Must::detect},
                                            {"skeleton", Must::quiet},
                                            {"pingmesh", Must::quiet}});
}

TEST(Scoreboard, NetworkFaultsAreLocalizedByTheProbers) {
  // Pingmesh's first alert (31 s) rests on a handful of failed probes through
  // the lossy link and ranks leaf14~spine2, which some of them also cross,
  // above it (0.5 against 0.33); its alert a minute later names leaf3~spine2.
  // Skeleton's ring probes cross leaf3~spine2 and leaf11~spine2 together;
  // its identifying probes from leaf3 to other leaves split the tie.
  check_scoreboard_fault(
      "link-loss",
      {{"pingmesh", Must::detect}, {"c4d", Must::detect}, {"falcon", Must::detect}, {"skeleton", Must::localize}});
  // The dark host link's RNIC is abandoned for a sibling in the flow tables
  // (what still trickles out of it, a stuck transfer's bytes, is no burst).
  check_scoreboard_fault("nic-down",
                         {{"pingmesh", Must::localize}, {"c4d", Must::detect}, {"skeleton", Must::localize}});
  check_scoreboard_fault("stale-flow-table", {{"skeleton", Must::localize}, {"pingmesh", Must::quiet}});
  check_scoreboard_fault("port-flap", {{"c4d", Must::localize}});
  // Spine 2's loaded ports queue alike wherever the rings cross it; its
  // ring probes wait there about 0.4 us longer, none is lost.
  check_scoreboard_fault("congestion", {{"c4d", Must::detect}, {"skeleton", Must::localize}});
}

}  // namespace
}  // namespace gauntlet::harness
