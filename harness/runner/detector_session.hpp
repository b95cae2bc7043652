#pragma once
// The detectors of one simulated run and what they ask of it. Each step
// every detector is handed the telemetry batch; its probe requests go to a
// prober of its own, its profiling and benchmark requests to the run's
// services, its alerts to the record and to the mitigation policy, which
// acts on the job through its console (levers and measured telemetry).
// The hosts' agents send heartbeats while some detector reads them.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/detectors/registry.hpp"
#include "harness/metrics/exporter_series.hpp"
#include "harness/mitigation/policy.hpp"
#include "harness/runner/simulation.hpp"
#include "harness/scenario/scenario.hpp"
#include "injectors/sim/simulated_fault.hpp"
#include "models/benchmark_service.hpp"
#include "models/job_console.hpp"
#include "models/probe_service.hpp"
#include "models/profiler.hpp"
#include "models/training_job.hpp"
#include "sim/telemetry_bus.hpp"

namespace gauntlet::harness {

// What detectors may ask the run for besides probes.
struct DetectorServices {
  models::Profiler& profiler;
  models::BenchmarkService& benchmarks;
};

class DetectorSession {
 public:
  // The scenario's detectors the request selects. `queueing_delay`: what a
  // probe waits on a link (the telemetry pipeline's view). Every argument
  // must outlive the session.
  DetectorSession(const Scenario& scenario, const DetectorRegistry& registry, const SimulationRequest& request,
                  const sim::Topology& topology, sim::NetworkEngine& engine, sim::TelemetryBus& bus,
                  models::TrainingJob& job, const injectors::SimulatedFaults& fault_types, const ScrapeSettings& scrape,
                  std::function<sim::Nanos(sim::LinkId)> queueing_delay);
  DetectorSession(const DetectorSession&) = delete;
  DetectorSession& operator=(const DetectorSession&) = delete;

  bool empty() const { return detectors_.empty(); }
  bool reads_samples() const;
  bool reads_flow_tables() const;
  bool reads_flow_records() const;
  // The policy reads the job's measurements (measure() feeds them).
  bool measures() const { return measures_; }
  models::JobControl& console() { return console_; }

  // The step's raw records, before samples join them: the measurements a policy reads.
  void measure(const telemetry::Batch& batch);
  // Hands `batch` to every detector at `t` and serves what each asks.
  void deliver(sim::Nanos t, const telemetry::Batch& batch, const DetectorServices& services);
  // The policy's turn at the end of the step.
  void tick(sim::Nanos t);
  // Each detector's outcome once the run is over.
  std::map<std::string, DetectorOutcome> finish(const models::BenchmarkService& benchmarks);

 private:
  struct ActiveDetector {
    std::string name;
    std::unique_ptr<Detector> detector;
    // Its probes run on a prober of its own, made at its first request: its
    // own source-RNIC slots and loss draws, so no detector's probing delays
    // or reshuffles another's.
    std::unique_ptr<models::ProbeService> prober;
  };
  std::unique_ptr<models::ProbeService> make_prober() const;
  void serve_requests(sim::Nanos t, ActiveDetector& d, DetectorOutcome& result, const DetectorServices& services);

  const Scenario& scenario_;
  const SimulationRequest& request_;
  const sim::Topology& topology_;
  sim::NetworkEngine& engine_;
  sim::TelemetryBus& bus_;
  models::TrainingJob& job_;
  const injectors::SimulatedFaults& fault_types_;
  std::function<sim::Nanos(sim::LinkId)> queueing_delay_;
  std::vector<ActiveDetector> detectors_;
  std::unique_ptr<MitigationPolicy> policy_;
  // Policies and services see the job through its levers and its telemetry.
  models::JobMeasurements measured_;
  models::JobConsole console_;
  bool measures_ = false;
  // The hosts' monitoring agents: heartbeats throughout, and probes on
  // request. Each detector's prober starts the probe stream of the run's
  // seed afresh, so a detector draws the same losses beside others as alone.
  std::unique_ptr<models::ProbeService> agents_;
  std::map<std::string, DetectorOutcome> outcomes_;
};

}  // namespace gauntlet::harness
