// The realistic healthy fleet end to end: a synchronous job runs at its
// slowest healthy GPU's pace (the reference figures' modelling note on
// Sinha et al., SC'22, and MegaScale), `background: none` is today's clean
// fleet, and every background condition reaches ground truth as benign.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "harness/detectors/registry.hpp"
#include "harness/runner/healthy_fleet.hpp"
#include "harness/runner/runner.hpp"
#include "harness/scenario/loader.hpp"
#include "models/fleet/fleet_calibration.hpp"
#include "sim/isolated_run.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness {
namespace {

std::string scenario_text(const std::string& background, int seed) {
  return "name: fleet\nseed: " + std::to_string(seed) + "\nduration: 10m\nbackground: " + background +
         "\n"
         "cluster: {spines: 2, leaves: 4, hosts: 8, gpus_per_host: 8, rnics_per_host: 4, rail_optimized: true,\n"
         "          host_link_gbps: 400, fabric_link_gbps: 400, link_latency: 1us}\n"
         "job: {name: llm, gpus: 64, parallelism: {tp: 8, pp: 1, dp: 8, ep: 1}, compute_per_iteration: 2s,\n"
         "      gradient_bytes: 64MB}\n";
}

// Each simulation in a process of its own (the flow engine is one per process).
double first_iteration_seconds(const Scenario& scenario, const DetectorRegistry& registry) {
  return std::stod(sim::run_isolated([&] {
    SimulationRequest request;
    request.run_detectors = false;
    const SimulationOutcome run = simulate(scenario, registry, request);
    return std::to_string(sim::to_seconds(run.timeline.front().duration));
  }));
}

TEST(HealthyFleetRun, JobRunsAtItsSlowestHealthyGpusPace) {
  const DetectorRegistry registry = builtin_detectors();
  for (int seed : {1, 2, 3}) {
    const Scenario clean = parse_scenario(scenario_text("none", seed), "clean.yaml", registry);
    const Scenario varied = parse_scenario(scenario_text("realistic", seed), "varied.yaml", registry);
    const sim::Topology topology(varied.cluster);
    const models::HealthyGpus gpus = healthy_gpus(varied, topology);
    const double slowest = *std::min_element(gpus.speeds().begin(), gpus.speeds().end());
    // Compute is 2 s of the step; the rest (a 64 MB allreduce) is the same in both.
    const double clean_step = first_iteration_seconds(clean, registry);
    const double varied_step = first_iteration_seconds(varied, registry);
    const double expected = clean_step + 2.0 * (1.0 / (slowest * gpus.pace(0)) - 1.0);
    EXPECT_NEAR(varied_step, expected, 0.002) << "seed " << seed;
    EXPECT_GT(varied_step, clean_step * 1.01) << "the slowest screened GPU is a few percent below the median";
  }
}

TEST(HealthyFleetRun, BackgroundConditionsAreBenignInGroundTruth) {
  const DetectorRegistry registry = builtin_detectors();
  Scenario varied = parse_scenario(scenario_text("realistic", 4), "varied.yaml", registry);
  // Dense enough to see each kind in ten minutes of a 64-GPU cluster.
  varied.calibration.set(models::calibration::kFleetCorruptingLinkShare, 0.2);
  varied.calibration.set(models::calibration::kFleetAppXidInterval, 2 * sim::kHour);
  varied.calibration.set(models::calibration::kFleetEcnBurstInterval, 1 * sim::kHour);
  varied.calibration.set(models::calibration::kFleetSlowMachineShare, 0.5);
  const auto episodes = background_episodes(varied);
  std::set<std::string> kinds;
  for (const FaultEpisode& e : episodes) {
    EXPECT_TRUE(e.benign && e.background) << e.id;
    EXPECT_FALSE(e.affected_job) << e.id;
    EXPECT_EQ(e.id.rfind("bg", 0), 0u);
    kinds.insert(e.type);
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"app_xid", "ecn_burst", "link_corruption", "slow_machine"}));
  Scenario clean = varied;
  clean.background = false;
  EXPECT_TRUE(background_episodes(clean).empty());
}

}  // namespace
}  // namespace gauntlet::harness
