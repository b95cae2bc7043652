#pragma once
// One simulated run of a scenario, start to end, in the calling process
// (SimGrid and ns-3 allow one engine per process; the runner forks for each
// run).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/detectors/alert.hpp"
#include "harness/detectors/registry.hpp"
#include "harness/mitigation/policy.hpp"
#include "harness/runner/collective_sample.hpp"
#include "harness/scenario/scenario.hpp"
#include "models/training_job.hpp"

namespace gauntlet::harness {

struct SimulationRequest {
  bool inject_faults = true;
  bool run_detectors = true;
  bool fast_forward = true;
  // How often detectors are handed the telemetry published since last time;
  // detection latency cannot be finer than this.
  sim::Nanos observe_interval = sim::kSecond;
  bool show_progress = false;  // progress lines on stderr
  // With a mitigation policy, one detector runs alone and the policy acts on
  // its alerts; "none" lets every detector observe the same run.
  std::string mitigation = "none";
  std::string only_detector;                // empty: every detector of the scenario (by DetectorSpec::run_name)
  std::vector<std::string> skip_detectors;  // run elsewhere (they act on the job)
  bool sample_collectives = false;          // keep a bounded per-rank sample for trace.json
  bool record_metrics = false;              // the telemetry as OpenMetrics (--metrics-out)
  // A folder of flow set outcomes shared with other runs of the same fabric
  // (models/collectives/flow_set_archive.hpp); empty: none.
  std::string flow_sets;
};

struct DetectorOutcome {
  std::vector<Alert> alerts;
  long long probes_sent = 0;
  // Profiling this detector switched on, and the training time it cost
  // (charged here, not applied to the run every detector shares).
  double profiling_seconds = 0;
  double profiling_overhead_s = 0;
  // Validation benchmarks it ran and how long they paused training (which
  // every detector observing the same run shares; see the runner's scoring).
  int benchmarks = 0;
  double benchmark_pause_s = 0;
  double benchmark_pause_iterations = 0;  // the pause at the pace the job had when it stopped
  std::string status = "ok";              // "failed: ..." when an exec: detector failed
  std::vector<MitigationAction> actions;  // what the mitigation policy did on its alerts
};

// The hosts the job ran on from `start` (a restart) until the next epoch's
// start, by slot.
struct PlacementEpoch {
  sim::Nanos start = 0;
  std::vector<int> hosts;
};

struct SimulationOutcome {
  std::vector<models::IterationSpan> timeline;
  std::vector<PlacementEpoch> placements;            // in time order; the first starts at 0
  models::PlacementShortfall shortfall;              // when the job waited for hosts it could not get
  std::map<std::string, DetectorOutcome> detectors;  // by detector name
  long long telemetry_bytes = 0;
  std::uint64_t simulated_iterations = 0;  // iterations not fast-forwarded
  CollectiveSample collectives;            // when the request asked for it
  std::string containers_csv;              // the job's container lifetimes (containers_csv.hpp)
  std::string openmetrics;                 // when the request asked for it (harness/metrics/openmetrics.hpp)
  // Jobs sharing the cluster: the jobs each fault touches, by fault id (tenants.hpp).
  std::map<std::string, std::vector<std::string>> fault_jobs;

  std::uint64_t iterations() const;
  std::string to_json() const;
  static SimulationOutcome from_json(const std::string& text);
};

SimulationOutcome simulate(const Scenario& scenario, const DetectorRegistry& registry,
                           const SimulationRequest& request);

}  // namespace gauntlet::harness
