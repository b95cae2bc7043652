#include "harness/runner/counterfactual_runs.hpp"

#include <functional>
#include <string>

#include "harness/runner/runner.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::harness {
namespace {

bool pauses_training(const std::string& detector, const DetectorRegistry& registry) {
  if (detector.starts_with("exec:")) return true;  // it may ask for benchmarks
  const DetectorInfo* info = registry.find(detector);
  return info && info->pauses_training;
}

bool opens_profiling(const std::string& detector, const DetectorRegistry& registry) {
  const DetectorInfo* info = registry.find(detector);
  return info && info->shares_profiling;
}

// Which detectors watch a run of their own.
std::vector<bool> own_runs(const Scenario& scenario, const DetectorRegistry& registry) {
  const bool mitigated = scenario.mitigation != "none";
  std::vector<bool> own_run(scenario.detectors.size(), mitigated);
  if (mitigated || scenario.detectors.size() < 2) return own_run;
  bool profiler_in_shared_run = false;
  for (std::size_t i = 0; i < own_run.size(); ++i) {
    const std::string& name = scenario.detectors[i].name;
    own_run[i] = pauses_training(name, registry);
    if (!own_run[i] && opens_profiling(name, registry)) {
      own_run[i] = profiler_in_shared_run;
      profiler_in_shared_run = true;
    }
  }
  return own_run;
}

}  // namespace

CounterfactualRuns plan_runs(const Scenario& scenario, const DetectorRegistry& registry, const RunOptions& options) {
  const bool mitigated = scenario.mitigation != "none";
  const std::vector<bool> own_run = own_runs(scenario, registry);
  CounterfactualRuns runs;
  SimulationRequest faulty;
  faulty.show_progress = options.show_progress;
  faulty.run_detectors = !mitigated;  // with mitigation, a run with no detector is the status quo baseline
  faulty.sample_collectives = true;   // for trace.json
  faulty.record_metrics = options.record_metrics;
  for (std::size_t i = 0; i < own_run.size(); ++i)
    if (own_run[i] && !mitigated) faulty.skip_detectors.push_back(scenario.detectors[i].run_name());
  faulty.flow_sets = options.flow_sets;
  SimulationRequest fault_free;
  fault_free.flow_sets = options.flow_sets;
  fault_free.inject_faults = false;
  fault_free.run_detectors = false;
  runs.requests = {faulty, fault_free};
  runs.run_of.assign(scenario.detectors.size(), CounterfactualRuns::kShared);
  for (std::size_t i = 0; i < scenario.detectors.size(); ++i) {
    if (!own_run[i]) continue;
    SimulationRequest r;
    r.mitigation = scenario.mitigation;
    r.only_detector = scenario.detectors[i].run_name();
    r.sample_collectives = true;  // for trace.json
    r.flow_sets = options.flow_sets;
    runs.run_of[i] = runs.requests.size();
    runs.requests.push_back(r);
  }
  return runs;
}

std::vector<SimulationOutcome> simulate_runs(const Scenario& scenario, const DetectorRegistry& registry,
                                             const CounterfactualRuns& runs, int parallel) {
  std::vector<std::function<std::string()>> bodies;
  for (const SimulationRequest& r : runs.requests)
    bodies.push_back([&scenario, &registry, &r] { return simulate(scenario, registry, r).to_json(); });
  std::vector<SimulationOutcome> out;
  for (const std::string& result : sim::run_isolated_all(bodies, parallel))
    out.push_back(SimulationOutcome::from_json(result));
  return out;
}

}  // namespace gauntlet::harness
