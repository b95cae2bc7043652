#include "harness/soak/case_runner.hpp"

#include <algorithm>
#include <functional>
#include <set>
#include <stdexcept>

#include "harness/metrics/pipeline_calibration.hpp"
#include "harness/runner/simulation.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scenario/loader.hpp"
#include "harness/soak/invariants.hpp"
#include "harness/soak/scenario_generator.hpp"
#include "sim/component_id.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::harness::soak {
namespace {

void add_all(std::vector<std::string>& to, const std::string& prefix, const std::vector<std::string>& problems) {
  for (const std::string& p : problems) to.push_back(prefix + p);
}

}  // namespace

CaseReport run_case(std::uint64_t seed, std::uint64_t case_number, const DetectorRegistry& registry, int parallel) {
  return check_scenario_text(random_scenario_yaml(seed, case_number), registry, parallel);
}

namespace {

// The five runs of a case: the faulty run twice, the fault-free run, and the
// faulty run without detectors fast-forwarded and step by step.
std::vector<SimulationRequest> case_requests(const Scenario& scenario) {
  SimulationRequest faulty;
  faulty.record_metrics = true;
  if (scenario.mitigation != "none") {
    // A policy acts on one detector's alerts, as the runner's own runs do.
    faulty.mitigation = scenario.mitigation;
    faulty.only_detector = scenario.detectors.front().run_name();
  }
  SimulationRequest fault_free = faulty;
  fault_free.inject_faults = false;
  SimulationRequest fast = faulty;
  fast.run_detectors = false;
  fast.record_metrics = false;
  SimulationRequest stepped = fast;
  stepped.fast_forward = false;
  return {faulty, faulty, fault_free, fast, stepped};
}

// Hosts whose clocks a fault skews: their samples may fall outside the run.
std::set<std::string> skewed_hosts(const Scenario& scenario) {
  std::set<std::string> hosts;
  for (const injectors::FaultSpec& f : scenario.faults)
    if (const auto id = sim::ComponentId::parse(f.target);
        id && id->host >= 0 && scenario.fault_types->spec(f.type).skews_clocks)
      hosts.insert(sim::ComponentId::make_host(id->host).str());
  return hosts;
}

void check_runs(const Scenario& scenario, const std::vector<std::string>& results, CaseReport& report) {
  if (results[0] != results[1]) report.problems.push_back("the same seed gave different results in two runs");
  report.checked.push_back(kSameBytes);
  const SimulationOutcome run = SimulationOutcome::from_json(results[0]);
  const SimulationOutcome counterfactual = SimulationOutcome::from_json(results[2]);
  const SimulationOutcome fast_forwarded = SimulationOutcome::from_json(results[3]);
  const SimulationOutcome step_by_step = SimulationOutcome::from_json(results[4]);
  report.iterations = run.iterations();

  add_all(report.problems, "faulty run: ", timeline_problems(run.timeline));
  add_all(report.problems, "fault-free run: ", timeline_problems(counterfactual.timeline));
  report.checked.push_back(kForwardIterations);
  add_all(report.problems, "", timeline_differences(fast_forwarded.timeline, step_by_step.timeline));
  report.checked.push_back(kFastForward);
  sim::Nanos first_onset = scenario.duration;
  for (const injectors::FaultSpec& f : scenario.faults) first_onset = std::min(first_onset, f.start);
  add_all(report.problems, "",
          alert_problems(run, counterfactual, first_onset, SimulationRequest{}.observe_interval, scenario.duration));
  report.checked.push_back(kNoEarlyAlerts);
  // The exporters' first scrape comes one scrape interval into the run: a
  // shorter run ends before any counter reaches the OpenMetrics text.
  if (scenario.duration < scrape_settings(scenario.calibration, scenario.seed).scrape_interval) {
    report.skipped.emplace_back(kByteBalance, "shorter than a scrape");
    return;
  }
  // The hybrid engine's batches count PAUSE frames, but the bytes it shows
  // are the flow model's, data only.
  add_all(report.problems, "",
          byte_balance_problems(run.openmetrics, skewed_hosts(scenario), scenario.engine == "packet"));
  report.checked.push_back(kByteBalance);
}

}  // namespace

CaseReport check_scenario_text(const std::string& yaml, const DetectorRegistry& registry, int parallel) {
  CaseReport report;
  report.scenario_yaml = yaml;
  Scenario scenario;
  try {
    scenario = parse_scenario(report.scenario_yaml, "case.yaml", registry);
  } catch (const InputError& e) {
    report.problems.push_back(std::string("the generated scenario is refused: ") + e.what());
    return report;
  }
  report.faults = scenario.faults.size();
  report.engine = scenario.engine;
  for (const injectors::FaultSpec& f : scenario.faults) report.fault_types.push_back(f.type);

  std::vector<std::function<std::string()>> bodies;
  for (const SimulationRequest& request : case_requests(scenario))
    bodies.emplace_back([&scenario, &registry, request] { return simulate(scenario, registry, request).to_json(); });
  std::vector<std::string> results;
  try {
    results = sim::run_isolated_all(bodies, parallel);
  } catch (const std::exception& e) {
    report.problems.push_back(std::string("a run failed: ") + e.what());
    return report;
  }
  check_runs(scenario, results, report);
  return report;
}

}  // namespace gauntlet::harness::soak
