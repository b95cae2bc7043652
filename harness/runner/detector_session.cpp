#include "harness/runner/detector_session.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "harness/detectors/external_detector.hpp"
#include "harness/metrics/pipeline_calibration.hpp"
#include "harness/metrics/prom_rules_detector.hpp"
#include "harness/runner/probe_wiring.hpp"
#include "harness/scenario/input_error.hpp"
#include "models/calibration.hpp"

namespace gauntlet::harness {
namespace {

// What an external detector is told before its first batch: what the
// operator and the scheduler know, never the faults.
ExternalRunInfo external_run_info(const Scenario& scenario, const sim::Topology& topology, sim::Nanos batch_period) {
  ExternalRunInfo run;
  run.topology = &topology;
  run.job_name = scenario.job.name;
  run.job_gpus = scenario.job.gpus;
  const int per_host = std::max(1, topology.shape().gpus_per_host);
  run.job_hosts = (scenario.job.gpus + per_host - 1) / per_host;
  run.spare_hosts = scenario.job.spare_hosts;
  run.batch_period = batch_period;
  run.heartbeat_period = scenario.calibration.duration(models::calibration::kAgentHeartbeat);
  run.duration = scenario.duration;
  return run;
}

// A detector entry this run cannot take is bad input at that entry (the
// loader checks what it can; an exec: detector's parameters are read only
// here, in the simulation's own process).
[[noreturn]] void reject_detector(const Scenario& scenario, const DetectorSpec& spec, const std::string& message) {
  throw InputError(scenario.source_path, spec.pos.line, spec.pos.column, message);
}

std::unique_ptr<Detector> make_detector(const Scenario& scenario, const DetectorSpec& spec,
                                        const DetectorRegistry& registry, const sim::Topology& topology,
                                        sim::Nanos batch_period, const ScrapeSettings& scrape) {
  if (spec.name.starts_with(ExternalDetector::kPrefix)) {
    ExternalConfig config;
    try {
      config = external_config_from(spec.params);
    } catch (const std::invalid_argument& e) {
      reject_detector(scenario, spec, e.what());
    }
    return std::make_unique<ExternalDetector>(spec.name, config, external_run_info(scenario, topology, batch_period));
  }
  if (spec.name.starts_with(PromRulesDetector::kPrefix)) {
    std::string error, bad_key;
    auto config = parse_prom_config(spec.name.substr(std::string(PromRulesDetector::kPrefix).size()), spec.params,
                                    &error, &bad_key);
    if (!config) reject_detector(scenario, spec, "detector '" + spec.name + "': " + error);
    config->scrape = scrape;
    config->evaluation_interval = scenario.calibration.duration(calibration::kEvaluationInterval);
    return std::make_unique<PromRulesDetector>(spec.name, *config, scenario.duration);
  }
  const DetectorInfo* info = registry.find(spec.name);
  if (!info) reject_detector(scenario, spec, "detector '" + spec.name + "' is not available in this build");
  std::string error;
  auto params = registry.resolve(*info, spec.params, &error);
  if (!params) reject_detector(scenario, spec, "detector '" + spec.name + "': " + error);
  DetectorContext context{&topology, *params, spec.run_name()};
  return info->make(context);
}

// The scenario's detectors the request selects: one alone, or all but
// those run elsewhere; none when the request runs none.
std::vector<const DetectorSpec*> selected(const Scenario& scenario, const SimulationRequest& request) {
  std::vector<const DetectorSpec*> out;
  if (!request.run_detectors) return out;
  for (const DetectorSpec& d : scenario.detectors) {
    if (!request.only_detector.empty() && d.run_name() != request.only_detector) continue;
    if (std::find(request.skip_detectors.begin(), request.skip_detectors.end(), d.run_name()) !=
        request.skip_detectors.end())
      continue;
    out.push_back(&d);
  }
  return out;
}

}  // namespace

DetectorSession::DetectorSession(const Scenario& scenario, const DetectorRegistry& registry,
                                 const SimulationRequest& request, const sim::Topology& topology,
                                 sim::NetworkEngine& engine, sim::TelemetryBus& bus, models::TrainingJob& job,
                                 const injectors::SimulatedFaults& fault_types, const ScrapeSettings& scrape,
                                 std::function<sim::Nanos(sim::LinkId)> queueing_delay)
    : scenario_(scenario),
      request_(request),
      topology_(topology),
      engine_(engine),
      bus_(bus),
      job_(job),
      fault_types_(fault_types),
      queueing_delay_(std::move(queueing_delay)),
      measured_(scenario.job),
      console_(job, measured_) {
  for (const DetectorSpec* spec : selected(scenario, request))
    detectors_.push_back({spec->run_name(),
                          make_detector(scenario, *spec, registry, topology, request.observe_interval, scrape),
                          nullptr});
  policy_ = make_policy(request.mitigation, scenario.job, scenario.mitigation_costs, scenario.calibration);
  measures_ = policy_ && policy_->reads_measurements();
  agents_ = make_prober();
  if (std::any_of(detectors_.begin(), detectors_.end(),
                  [](const ActiveDetector& d) { return d.detector->reads_heartbeats(); }))
    agents_->start_heartbeats(scenario.calibration.duration(models::calibration::kAgentHeartbeat), scenario.duration);
  for (const ActiveDetector& d : detectors_) outcomes_[d.name];
}

bool DetectorSession::reads_samples() const {
  return std::any_of(detectors_.begin(), detectors_.end(),
                     [](const ActiveDetector& d) { return d.detector->reads_samples(); });
}

bool DetectorSession::reads_flow_tables() const {
  return std::any_of(detectors_.begin(), detectors_.end(),
                     [](const ActiveDetector& d) { return d.detector->reads_flow_tables(); });
}

bool DetectorSession::reads_flow_records() const {
  return std::any_of(detectors_.begin(), detectors_.end(),
                     [](const ActiveDetector& d) { return d.detector->reads_flow_records(); });
}

std::unique_ptr<models::ProbeService> DetectorSession::make_prober() const {
  auto prober = std::make_unique<models::ProbeService>(engine_, bus_, scenario_.seed,
                                                       models::ProbeCost::from(scenario_.calibration));
  prober->set_overlay(&job_.containers());  // overlay probes reach the job's live containers only
  prober->set_horizon(scenario_.duration);  // the engine runs no further
  // On the flow engine probes wait as long as the fabric counters' queues say.
  prober->set_queueing_delay(queueing_delay_);
  if (request_.inject_faults) arm_probe_faults(*prober, scenario_.faults, fault_types_, topology_, scenario_.duration);
  return prober;
}

void DetectorSession::measure(const telemetry::Batch& batch) {
  if (measures_) measured_.observe(batch);
}

void DetectorSession::deliver(sim::Nanos t, const telemetry::Batch& batch, const DetectorServices& services) {
  for (ActiveDetector& d : detectors_) {
    d.detector->observe(batch);
    if (std::vector<models::ProbeOrder> orders = probe_orders(d.detector->take_probe_requests(), topology_);
        !orders.empty()) {
      if (!d.prober) d.prober = make_prober();
      d.prober->submit(d.name, orders);
    }
    DetectorOutcome& result = outcomes_[d.name];
    for (Alert& alert : d.detector->take_alerts()) {
      alert.detector = d.name;
      if (policy_) policy_->on_alert(alert, console_, t);
      result.alerts.push_back(std::move(alert));
    }
    serve_requests(t, d, result, services);
  }
}

// Profiling windows and validation benchmarks the detector asked for.
void DetectorSession::serve_requests(sim::Nanos t, ActiveDetector& d, DetectorOutcome& result,
                                     const DetectorServices& services) {
  for (const ProfilingRequest& p : d.detector->take_profiling_requests()) {
    const models::ProfilingCost cost =
        services.profiler.start(t, std::min(p.duration, scenario_.duration - t), p.workers);
    result.profiling_seconds += cost.window_seconds;
    result.profiling_overhead_s += cost.overhead_seconds;
    job_.cut_steady_run();  // the window's iterations are published as it closes, not at a stretch's end
  }
  for (BenchmarkRequest& b : d.detector->take_benchmark_requests()) {
    if (b.kind != "gemm" && b.kind != "allreduce") continue;  // nothing to run
    services.benchmarks.submit({d.name, std::move(b.kind), std::move(b.targets)});
  }
}

void DetectorSession::tick(sim::Nanos t) {
  if (policy_) policy_->on_tick(console_, t);
}

std::map<std::string, DetectorOutcome> DetectorSession::finish(const models::BenchmarkService& benchmarks) {
  for (const ActiveDetector& d : detectors_) {
    DetectorOutcome& result = outcomes_[d.name];
    result.status = d.detector->status();
    if (d.prober) result.probes_sent = d.prober->probes_sent(d.name);
    const models::BenchmarkCost cost = benchmarks.cost(d.name);
    result.benchmarks = cost.benchmarks;
    result.benchmark_pause_s = cost.pause_seconds;
    result.benchmark_pause_iterations = cost.pause_iterations;
    if (policy_) result.actions = policy_->actions();
  }
  return std::move(outcomes_);
}

}  // namespace gauntlet::harness
