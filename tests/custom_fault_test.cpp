// A fault type defined here, in this one file, and run through a scenario
// end to end: the loader reads its parameter through its descriptor and the
// run applies its simulated effect. Nothing else knows about it.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "harness/detectors/registry.hpp"
#include "harness/runner/simulation.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scenario/loader.hpp"
#include "injectors/faults/fault_catalog.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::harness {
namespace {

using injectors::FaultDescriptor;
using injectors::FaultEffectScope;

// link_derate{lost}: a port that came up at a lower speed than its line
// rate, losing `lost` of its capacity.
FaultDescriptor link_derate() {
  FaultDescriptor d;
  d.spec = {.name = "link_derate",
            .summary = "a link running below its line rate",
            .targets = {sim::ComponentKind::host_link, sim::ComponentKind::fabric_link},
            .params = {{.name = "lost",
                        .kind = injectors::ParamKind::fraction,
                        .required = true,
                        .help = "fraction of the link's capacity lost"}}};
  d.simulated = injectors::SimulatedFault{.apply = [](FaultEffectScope& scope) {
    injectors::PathEffect effect;
    effect.bandwidth_factor = 1.0 - scope.fault().params.number("lost");
    scope.set_during(scope.fault().target, effect);
  }};
  return d;
}

std::shared_ptr<const injectors::FaultCatalog> types_with_link_derate() {
  constexpr injectors::FaultRegistration kTypes[] = {link_derate};
  return std::make_shared<const injectors::FaultCatalog>(injectors::make_fault_catalog(kTypes));
}

// 4 hosts x 4 GPUs, tp 4 x dp 4: one data-parallel ring per rail; 1 s of
// compute and a 10 GB allreduce per iteration. h1.nic2's host link carries
// rail 2's ring edges into and out of h1. On the clean fleet: the test
// checks the step's arithmetic, which the healthy GPUs' spread would move.
std::string scenario_text(const std::string& fault) {
  return R"(name: custom-fault
seed: 3
duration: 7m
engine: flow
background: none
cluster: {spines: 2, leaves: 4, hosts: 4, gpus_per_host: 4, rnics_per_host: 4, rail_optimized: true,
          host_link_gbps: 400, fabric_link_gbps: 400, link_latency: 1us}
job:
  name: small
  gpus: 16
  parallelism: {tp: 4, pp: 1, dp: 4, ep: 1}
  compute_per_iteration: 1s
  gradient_bytes: 10GB
  checkpoint_interval: 30m
faults:
  - )" + fault +
         "\n";
}

const std::string kDerate = "{type: link_derate, target: h1.nic2~leaf2, at: 2m, duration: 3m, lost: 0.5}";

// Median iteration time of the iterations that start within [from, to) s.
double iteration_seconds(const SimulationOutcome& run, double from, double to) {
  std::vector<double> durations;
  for (const models::IterationSpan& span : run.timeline)
    for (std::uint64_t i = 0; i < span.count; ++i) {
      const double start = sim::to_seconds(span.start + static_cast<sim::Nanos>(i) * span.duration);
      if (start >= from && start < to) durations.push_back(sim::to_seconds(span.duration));
    }
  if (durations.empty()) return 0;
  std::sort(durations.begin(), durations.end());
  return durations[durations.size() / 2];
}

TEST(CustomFaultType, RunsThroughAScenarioEndToEnd) {
  const SimulationOutcome run = SimulationOutcome::from_json(sim::run_isolated([] {
    const DetectorRegistry detectors = builtin_detectors();
    const Scenario scenario =
        parse_scenario(scenario_text(kDerate), "custom.yaml", detectors, {}, types_with_link_derate());
    return simulate(scenario, detectors, SimulationRequest{}).to_json();
  }));
  const double before = iteration_seconds(run, 30, 120);
  const double during = iteration_seconds(run, 130, 290);
  const double after = iteration_seconds(run, 320, 420);
  ASSERT_GT(before, 1.0);
  // The iteration is compute then the ring's allreduce, paced by its
  // slowest edge: at half the rate on rail 2's edges through h1, the
  // allreduce takes twice as long and compute is unchanged.
  const double communication = before - 1.0;
  EXPECT_NEAR(during, 1.0 + 2 * communication, 0.02 * communication);
  EXPECT_NEAR(after, before, 1e-6);
}

TEST(CustomFaultType, ItsParametersAreValidatedByItsDescriptor) {
  const DetectorRegistry detectors = builtin_detectors();
  const std::string bad = "{type: link_derate, target: h1.nic2~leaf2, at: 2m, duration: 3m, lost: 1.5}";
  try {
    parse_scenario(scenario_text(bad), "custom.yaml", detectors, {}, types_with_link_derate());
    FAIL() << "a fraction of 1.5 was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(e.message().find("must be in [0, 1)"), std::string::npos) << e.what();
  }
  // The built-in catalog does not know it: the type lives in its own catalog only.
  EXPECT_THROW(parse_scenario(scenario_text(kDerate), "custom.yaml", detectors), InputError);
}

}  // namespace
}  // namespace gauntlet::harness
