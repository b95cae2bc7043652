#pragma once
// A scenario is data: a cluster, a job, faults, detectors, a mitigation
// policy and the calibration constants in force, all derived from one seed.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "injectors/spec/fault_spec.hpp"
#include "models/job_spec.hpp"
#include "sim/calibration.hpp"
#include "sim/network_calibration.hpp"
#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace gauntlet::injectors {
class FaultCatalog;
}

namespace gauntlet::harness {

// The job's description is the model's; the scenario reuses it as is.
using models::JobSpec;
using models::ParallelismSpec;

// Where a key sat in the scenario file, for error messages raised after
// loading (for example by a detector rejecting a parameter value).
struct SourcePos {
  int line = 0;    // 1-based; 0 = unknown
  int column = 0;  // 1-based
};

struct DetectorSpec {
  std::string name;                           // registered name or "exec:COMMAND"
  std::map<std::string, std::string> params;  // raw scalar text, validated by the registry
  SourcePos pos;
  std::string as;  // the name its results go by, when given (a detector listed twice, a short exec: name)

  const std::string& run_name() const { return as.empty() ? name : as; }
};

// Who detectors watch when several jobs share the cluster: each tenant's
// own detectors, seeing its telemetry and the shared fabric's (a cloud
// tenant's view), or one set seeing the whole cluster (its operator's).
enum class DetectorScope { tenant, cluster };

struct Scenario {
  std::string name;
  std::uint64_t seed = 0;
  sim::Nanos duration = 0;
  std::string engine = "flow";
  sim::ClusterShape cluster;
  // The job this run observes: detectors, mitigation and scoring are its.
  JobSpec job;
  // Every job sharing the cluster (`jobs:`), in file order, when there are
  // several (empty: `job` alone). All of them run in every simulation;
  // `job` is jobs[observed_job] (tenant_view picks another).
  std::vector<JobSpec> jobs;
  std::size_t observed_job = 0;
  DetectorScope detectors_scope = DetectorScope::tenant;
  std::vector<injectors::FaultSpec> faults;  // concrete: globs and Poisson onsets already drawn
  // The fault types the faults were read with; the run applies them.
  std::shared_ptr<const injectors::FaultCatalog> fault_types;
  std::vector<DetectorSpec> detectors;
  std::string mitigation = "none";
  // Step costs by step name overriding the policy's defaults (falcon-ladder:
  // rebalance, relayout, restart).
  std::map<std::string, sim::Nanos> mitigation_costs;
  // `background: realistic` (true, the default) or `none` (the clean fleet).
  bool background = true;
  // Calibration attributes the scenario sets; the others keep their defaults.
  sim::Calibration calibration;
  // The network calibration table the flow engine reads (`network_calibration:
  // FILE`, written by `gauntlet calibrate`); null for the shipped one.
  std::shared_ptr<const sim::NetworkCalibration> network_calibration;
  std::string network_calibration_file;
  const sim::NetworkCalibration& network_table() const {
    return network_calibration ? *network_calibration : sim::shipped_network_calibration();
  }
  std::string source_path;
  // What loading found worth a word but not a refusal ("FILE:LINE:COL:
  // warning: ..."): a prom: rule reading a metric never exported.
  std::vector<std::string> warnings;

  bool shared() const { return jobs.size() > 1; }
};

// The same scenario observing tenant `index` of its jobs.
inline Scenario tenant_view(const Scenario& scenario, std::size_t index) {
  Scenario view = scenario;
  view.observed_job = index;
  view.job = scenario.jobs.at(index);
  return view;
}

}  // namespace gauntlet::harness
