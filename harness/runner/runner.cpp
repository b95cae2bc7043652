#include "harness/runner/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "harness/metrics/prom_rules_detector.hpp"
#include "harness/mitigation/policy.hpp"
#include "harness/runner/counterfactual_runs.hpp"
#include "harness/runner/healthy_fleet.hpp"
#include "harness/runner/job_impact.hpp"
#include "harness/scenario/ground_truth_calibration.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scenario/loader.hpp"
#include "injectors/faults/fault_catalog.hpp"
#include "injectors/sim/fault_scheduler.hpp"
#include "sim/contract.hpp"

namespace gauntlet::harness {
std::vector<FaultEpisode> fault_episodes(const Scenario& scenario, const SimulationOutcome& faulty,
                                         const SimulationOutcome& fault_free) {
  const auto fault_types = fault_types_of(scenario);
  std::vector<FaultEpisode> episodes;
  std::vector<FaultWindow> windows;
  const double run_end = sim::to_seconds(scenario.duration);
  for (const injectors::FaultSpec& f : scenario.faults) {
    FaultEpisode e;
    e.id = f.id;
    e.type = f.type;
    e.target = f.target;
    e.start_s = sim::to_seconds(f.start);
    if (f.end()) e.end_s = sim::to_seconds(*f.end());
    e.benign = f.benign || fault_types->spec(f.type).benign;
    e.cause = f.cause;
    windows.push_back({e.target, e.start_s, e.end_s.value_or(run_end), e.benign});
    episodes.push_back(std::move(e));
  }
  const JobImpact impact(faulty, fault_free, std::move(windows),
                         scenario.calibration.value(calibration::kAffectedSlowdown), run_end);
  for (std::size_t i = 0; i < episodes.size(); ++i) episodes[i].affected_job = impact.affected(i);
  // The healthy fleet's background, benign in ground truth.
  append_background_episodes(scenario, episodes);
  return episodes;
}

namespace {

// An isolation is false when no fault that was active then sat on the
// isolated host.
int false_isolations(const std::vector<MitigationAction>& actions, const std::vector<FaultEpisode>& faults,
                     const ScoringOptions& scoring) {
  int count = 0;
  for (const MitigationAction& action : actions) {
    if (!takes_hosts_out(action)) continue;  // re-pairing moves traffic, not hosts
    for (const std::string& component : action.components) {
      const int host = host_of_component(component);
      bool justified = false;
      for (const FaultEpisode& f : faults) {
        const double end = f.end_s.value_or(scoring.run_end_s) + scoring.grace_s;
        justified = justified || (!f.benign && host >= 0 && host_of_component(f.target) == host &&
                                  action.time_s >= f.start_s && action.time_s <= end);
      }
      if (!justified) ++count;
    }
  }
  return count;
}

// The scenario as the runner takes it: what the loader admits, and a
// mitigation policy only with detectors that alert during the run.
void check_runnable(const Scenario& scenario) {
  const auto fault_types = fault_types_of(scenario);
  // The loader admits only what the simulator can run.
  GAUNTLET_INVARIANT(scenario.engine == "flow" || scenario.engine == "packet" || scenario.engine == "hybrid",
                     "engine '" + scenario.engine + "'");
  for (const injectors::FaultSpec& f : scenario.faults)
    GAUNTLET_INVARIANT(fault_types->simulated(f.type), "fault type '" + f.type + "'");
  (void)make_policy(scenario.mitigation, scenario.job,
                    scenario.mitigation_costs);  // rejects policies the simulator cannot run
  const bool mitigated = scenario.mitigation != "none";
  for (const DetectorSpec& d : scenario.detectors)
    if (mitigated && d.name.starts_with(PromRulesDetector::kPrefix))
      throw InputError(scenario.source_path, d.pos.line, d.pos.column,
                       "detector '" + d.name + "' is evaluated after the run, so it cannot drive mitigation '" +
                           scenario.mitigation + "'; use mitigation: none");
}

// The faults as episodes of the faulty run against the fault-free one, with
// the jobs each touched; a tenant's view keeps the ones that touch its job.
void add_fault_episodes(const Scenario& scenario, RunReport& report) {
  report.faults = fault_episodes(scenario, report.faulty, report.fault_free);
  for (FaultEpisode& f : report.faults)
    if (const auto jobs = report.faulty.fault_jobs.find(f.id); jobs != report.faulty.fault_jobs.end())
      f.jobs = jobs->second;
  if (scenario.shared()) report.cluster_faults = report.faults;
  if (scenario.shared() && scenario.detectors_scope == DetectorScope::tenant)
    std::erase_if(report.faults, [&](const FaultEpisode& f) {
      return std::find(f.jobs.begin(), f.jobs.end(), scenario.job.name) == f.jobs.end();
    });
}

// Each detector scored on the run it watched, its costs against the fault-free run.
void score_detectors(const Scenario& scenario, const CounterfactualRuns& runs, std::vector<SimulationOutcome>& results,
                     RunReport& report) {
  ScoringOptions scoring;
  scoring.run_end_s = sim::to_seconds(scenario.duration);
  scoring.pods_of = pods_in(scenario.cluster);
  const double iteration_hours = mean_iteration_seconds(report.fault_free) / 3600.0;
  // A tenant is scored on the faults that touched its job; the others only
  // keep an alert naming their component from counting false.
  const bool per_tenant = scenario.shared() && scenario.detectors_scope == DetectorScope::tenant;
  // A reference, not a copy, for a job alone: a month lists 10^5-10^6 background episodes.
  const std::vector<FaultEpisode> tenant_faults =
      per_tenant ? faults_for_tenant(report.cluster_faults, scenario.job.name) : std::vector<FaultEpisode>{};
  const std::vector<FaultEpisode>& scored_faults = per_tenant ? tenant_faults : report.faults;
  for (std::size_t i = 0; i < scenario.detectors.size(); ++i) {
    const std::string& name = scenario.detectors[i].run_name();
    double progress = static_cast<double>(report.faulty.iterations());
    long long telemetry_bytes = report.faulty.telemetry_bytes;
    if (runs.run_of[i] != CounterfactualRuns::kShared) {
      SimulationOutcome own = std::move(results[runs.run_of[i]]);
      report.faulty.detectors[name] = own.detectors.at(name);
      progress = static_cast<double>(own.iterations());
      telemetry_bytes = own.telemetry_bytes;  // what this detector's own run published
      report.own_runs[name] = std::move(own);
    }
    const DetectorOutcome& outcome = report.faulty.detectors.at(name);
    DetectorScore score = score_detector(scored_faults, outcome.alerts, scoring);
    if (score.faults.size() > report.faults.size())
      score.faults.resize(report.faults.size());  // the outcomes of this view's own faults
    RunCosts costs;
    costs.lost_iterations = static_cast<double>(report.fault_free.iterations()) - progress;
    costs.lost_gpu_hours = costs.lost_iterations * iteration_hours * scenario.job.gpus;
    costs.false_isolations = false_isolations(outcome.actions, report.faults, scoring);
    costs.probes_sent = outcome.probes_sent;
    costs.telemetry_bytes = telemetry_bytes;
    score.costs = costs;
    report.scores[name] = std::move(score);  // a month's outcomes: 10^5-10^6 background episodes
    report.detector_order.push_back(name);
  }
}

RunReport run_view(const Scenario& scenario, const DetectorRegistry& registry, const RunOptions& options) {
  check_runnable(scenario);
  const auto wall_start = std::chrono::steady_clock::now();
  const CounterfactualRuns runs = plan_runs(scenario, registry, options);
  std::vector<SimulationOutcome> results = simulate_runs(scenario, registry, runs, options.parallel_runs);
  RunReport report;
  report.scenario = scenario;
  report.faulty = std::move(results[CounterfactualRuns::kShared]);
  report.fault_free = std::move(results[CounterfactualRuns::kFaultFree]);
  add_fault_episodes(scenario, report);
  score_detectors(scenario, runs, results, report);
  report.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return report;
}

}  // namespace

RunReport run_scenario(const Scenario& scenario, const DetectorRegistry& registry, const RunOptions& options) {
  if (!scenario.shared() || scenario.detectors_scope == DetectorScope::cluster)
    return run_view(scenario, registry, options);
  // Each tenant's detectors watch the same physical runs (every job runs in
  // each), seeing only their tenant; one view per tenant.
  const auto wall_start = std::chrono::steady_clock::now();
  std::vector<RunReport> views;
  for (std::size_t i = 0; i < scenario.jobs.size(); ++i)
    views.push_back(run_view(tenant_view(scenario, i), registry, options));
  RunReport report = views.front();
  report.tenants = std::move(views);
  report.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return report;
}

RunReport run_observed(const Scenario& scenario, const DetectorRegistry& registry, const RunOptions& options) {
  return run_view(scenario, registry, options);
}

std::map<std::string, TenantTotals> tenant_totals(const RunReport& report) {
  std::map<std::string, TenantTotals> totals;
  for (const RunReport& tenant : report.tenants)
    for (const auto& [name, score] : tenant.scores) {
      TenantTotals& t = totals[name];
      t.alerts += score.alerts;
      t.false_alerts += score.false_alerts;
      t.scored_faults += score.overall.scored_faults;
      t.detected += score.overall.detected;
    }
  for (auto& [name, t] : totals) {
    if (t.alerts > 0) t.precision = static_cast<double>(t.alerts - t.false_alerts) / t.alerts;
    if (t.scored_faults > 0) t.recall = static_cast<double>(t.detected) / t.scored_faults;
  }
  return totals;
}

std::vector<std::string> failed_detectors(const RunReport& report) {
  std::vector<std::string> out;
  for (const RunReport& tenant : report.tenants)
    for (const std::string& line : failed_detectors(tenant)) out.push_back(tenant.scenario.job.name + "/" + line);
  if (!report.tenants.empty()) return out;
  for (const std::string& name : report.detector_order) {
    const std::string& status = report.faulty.detectors.at(name).status;
    if (status.starts_with("failed: ")) out.push_back(name + " FAILED: " + status.substr(8));
  }
  return out;
}

}  // namespace gauntlet::harness
