#include "harness/runner/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "injectors/sim/fault_scheduler.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::harness {
namespace {

// A fault whose window saw iterations at least this much slower than the
// fault-free run's affected the job.
constexpr double kAffectedSlowdown = 1.001;

double mean_duration_between(const SimulationOutcome& run, double from_s, double to_s) {
  double total = 0, count = 0;
  for (const models::IterationSpan& span : run.timeline) {
    for (std::uint64_t i = 0; i < span.count; ++i) {
      const double start = sim::to_seconds(span.start + static_cast<sim::Nanos>(i) * span.duration);
      const double end = start + sim::to_seconds(span.duration);
      if (end < from_s) continue;
      if (start > to_s) break;
      total += sim::to_seconds(span.duration);
      count += 1;
    }
  }
  return count > 0 ? total / count : 0;
}

// Iterations that ended within [from_s, to_s].
double completions_between(const SimulationOutcome& run, double from_s, double to_s) {
  double count = 0;
  for (const models::IterationSpan& span : run.timeline) {
    const double first_end = sim::to_seconds(span.start + span.duration);
    const double step = sim::to_seconds(span.duration);
    if (step <= 0) continue;
    const double last_end = first_end + step * static_cast<double>(span.count - 1);
    if (last_end < from_s || first_end > to_s) continue;
    const double lo = std::max(0.0, std::ceil((from_s - first_end) / step));
    const double hi = std::min(static_cast<double>(span.count - 1), std::floor((to_s - first_end) / step));
    if (hi >= lo) count += hi - lo + 1;
  }
  return count;
}

double mean_duration(const SimulationOutcome& run) {
  double total = 0, count = 0;
  for (const auto& span : run.timeline) {
    total += sim::to_seconds(span.duration) * static_cast<double>(span.count);
    count += static_cast<double>(span.count);
  }
  return count > 0 ? total / count : 0;
}

}  // namespace

std::vector<FaultEpisode> fault_episodes(const Scenario& scenario, const SimulationOutcome& faulty,
                                         const SimulationOutcome& fault_free) {
  std::vector<FaultEpisode> episodes;
  const double baseline = mean_duration(fault_free);
  const double run_end = sim::to_seconds(scenario.duration);
  for (const injectors::FaultSpec& f : scenario.faults) {
    FaultEpisode e;
    e.id = f.id;
    e.type = std::string(injectors::fault_type_name(f.type));
    e.target = f.target;
    e.start_s = sim::to_seconds(f.start);
    if (f.end()) e.end_s = sim::to_seconds(*f.end());
    e.benign = f.type == injectors::FaultType::reconfigure;
    const double end = e.end_s.value_or(run_end);
    const double during = mean_duration_between(faulty, e.start_s, end);
    // A hang or crash completes fewer iterations than the fault-free run in
    // the same window (and maybe none at all), even if the ones it completes
    // are not slower.
    const double window_end = std::min(run_end, end + 2 * baseline);
    const bool fewer = completions_between(faulty, e.start_s, window_end) + 1 <
                       completions_between(fault_free, e.start_s, window_end);
    e.affected_job = !e.benign && (during > baseline * kAffectedSlowdown || fewer);
    episodes.push_back(std::move(e));
  }
  return episodes;
}

RunReport run_scenario(const Scenario& scenario, const DetectorRegistry& registry, const RunOptions& options) {
  for (const injectors::FaultSpec& f : scenario.faults)
    if (!injectors::FaultScheduler::simulated(f.type))
      throw std::invalid_argument("fault " + f.id + ": type '" + std::string(injectors::fault_type_name(f.type)) +
                                  "' is not simulated by the " + scenario.engine + " engine yet");
  if (scenario.engine != "flow")
    throw std::invalid_argument("engine '" + scenario.engine + "' is not available yet; use engine: flow");
  const auto wall_start = std::chrono::steady_clock::now();

  SimulationRequest faulty_request;
  faulty_request.show_progress = options.show_progress;
  SimulationRequest fault_free_request;
  fault_free_request.inject_faults = false;
  fault_free_request.run_detectors = false;
  auto results = sim::run_isolated_all(
      {[&] { return simulate(scenario, registry, faulty_request).to_json(); },
       [&] { return simulate(scenario, registry, fault_free_request).to_json(); }},
      options.parallel_runs);

  RunReport report;
  report.scenario = scenario;
  report.faulty = SimulationOutcome::from_json(results[0]);
  report.fault_free = SimulationOutcome::from_json(results[1]);
  report.faults = fault_episodes(scenario, report.faulty, report.fault_free);

  ScoringOptions scoring;
  scoring.run_end_s = sim::to_seconds(scenario.duration);
  const double lost = static_cast<double>(report.fault_free.iterations()) -
                      static_cast<double>(report.faulty.iterations());
  const double iteration_hours = mean_duration(report.fault_free) / 3600.0;
  for (const DetectorSpec& spec : scenario.detectors) {
    const DetectorOutcome& outcome = report.faulty.detectors.at(spec.name);
    DetectorScore score = score_detector(report.faults, outcome.alerts, scoring);
    score.lost_iterations = lost;
    score.lost_gpu_hours = lost * iteration_hours * scenario.job.gpus;
    score.probes_sent = outcome.probes_sent;
    score.telemetry_bytes = report.faulty.telemetry_bytes;
    report.scores[spec.name] = score;
    report.detector_order.push_back(spec.name);
  }
  report.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return report;
}

}  // namespace gauntlet::harness
