#pragma once
// Runs a scenario end to end: the faulty run with every detector observing
// and, in a process of its own, the fault-free counterfactual from the same
// seed; then scores each detector against the ground truth.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/runner/simulation.hpp"
#include "harness/scoring/score.hpp"

namespace gauntlet::harness {

struct RunOptions {
  bool show_progress = false;
  int parallel_runs = 2;        // simulations in flight at once
  bool record_metrics = false;  // keep the shared run's telemetry as OpenMetrics (faulty.openmetrics)
  std::string flow_sets;        // every simulation's SimulationRequest::flow_sets
};

struct RunReport {
  Scenario scenario;
  double wall_seconds = 0;
  SimulationOutcome fault_free;
  SimulationOutcome faulty;  // no mitigation: every detector observed this run
  // The runs detectors watched alone (under a mitigation policy, or one that
  // pauses training), by detector name; their alerts and actions are also
  // copied into faulty.detectors.
  std::map<std::string, SimulationOutcome> own_runs;
  std::vector<FaultEpisode> faults;
  std::map<std::string, DetectorScore> scores;  // in scenario order via detector_order
  std::vector<std::string> detector_order;
  // Jobs sharing the cluster, detectors per tenant: each tenant's own report
  // (its view of the same runs, scored against the faults that touch it;
  // the fields above are the first tenant's), and every fault with the jobs
  // it touches.
  std::vector<RunReport> tenants;
  std::vector<FaultEpisode> cluster_faults;
};

// Scores summed over tenants, per detector: alerts and false alerts of every
// tenant's run, faults over (tenant, fault) pairs.
struct TenantTotals {
  int alerts = 0;
  int false_alerts = 0;
  int scored_faults = 0;
  int detected = 0;
  std::optional<double> precision;
  std::optional<double> recall;
};
std::map<std::string, TenantTotals> tenant_totals(const RunReport& report);

RunReport run_scenario(const Scenario& scenario, const DetectorRegistry& registry, const RunOptions& options);

// Only the observed tenant's view (scenario.job) of a shared cluster, or the
// whole run when it has one job: what a benchmark episode scores.
RunReport run_observed(const Scenario& scenario, const DetectorRegistry& registry, const RunOptions& options);

// "NAME FAILED: reason" for every detector that failed (a crashed, hung or
// unstartable exec: detector, a rule file promtool refused), in scenario order.
std::vector<std::string> failed_detectors(const RunReport& report);

// Faults as episodes; a fault affected the job (impactful, else latent) when
// iterations overlapping its window ran slower than the fault-free run on the
// same placement over the same time, or fewer completed (job_impact.hpp).
std::vector<FaultEpisode> fault_episodes(const Scenario& scenario, const SimulationOutcome& faulty,
                                         const SimulationOutcome& fault_free);

}  // namespace gauntlet::harness
