#pragma once
// The simulations one scenario's report compares, all from the same seed:
//   - the faulty run the detectors that only observe share;
//   - the fault-free run: the counterfactual every cost is measured against
//     (what the job would have done without the faults);
//   - a run of its own for each detector that changes the run it watches:
//     under a mitigation policy every detector (its alerts change the run),
//     else one whose benchmarks pause training, and the second of two that
//     open profiling windows (the windows reach every detector of a run).
#include <cstddef>
#include <vector>

#include "harness/detectors/registry.hpp"
#include "harness/runner/simulation.hpp"
#include "harness/scenario/scenario.hpp"

namespace gauntlet::harness {

struct RunOptions;

struct CounterfactualRuns {
  static constexpr std::size_t kShared = 0;     // the faulty run observing detectors share
  static constexpr std::size_t kFaultFree = 1;  // the counterfactual
  std::vector<SimulationRequest> requests;      // kShared, kFaultFree, then the detectors' own runs
  std::vector<std::size_t> run_of;              // per scenario detector: its run in `requests`
};

CounterfactualRuns plan_runs(const Scenario& scenario, const DetectorRegistry& registry, const RunOptions& options);

// Every planned simulation, each in a process of its own (SimGrid and ns-3
// allow one engine per process), `parallel` at a time; in plan order.
std::vector<SimulationOutcome> simulate_runs(const Scenario& scenario, const DetectorRegistry& registry,
                                             const CounterfactualRuns& runs, int parallel);

}  // namespace gauntlet::harness
