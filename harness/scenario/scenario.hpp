#pragma once
// A scenario is data: a cluster, a job, faults, detectors and a mitigation
// policy, all derived from one seed.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "injectors/spec/fault_spec.hpp"
#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness {

struct ParallelismSpec {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int ep = 1;
};

struct JobSpec {
  std::string name = "job";
  int gpus = 0;
  ParallelismSpec parallelism;
  sim::Nanos compute_per_iteration = sim::kSecond;
  std::uint64_t gradient_bytes = 0;    // DP allreduce per iteration, per rank
  std::uint64_t activation_bytes = 0;  // PP send/recv per micro-batch
  int microbatches = 1;
  sim::Nanos checkpoint_interval = 30 * sim::kMinute;
  sim::Nanos restart_cost = 5 * sim::kMinute;
  int spare_hosts = 0;
  sim::Nanos collective_timeout = 30 * sim::kMinute;  // NCCL watchdog
};

// Where a key sat in the scenario file, for error messages raised after
// loading (for example by a detector rejecting a parameter value).
struct SourcePos {
  int line = 0;    // 1-based; 0 = unknown
  int column = 0;  // 1-based
};

struct DetectorSpec {
  std::string name;                            // registered name or "exec:COMMAND"
  std::map<std::string, std::string> params;   // raw scalar text, validated by the registry
  SourcePos pos;
};

struct Scenario {
  std::string name;
  std::uint64_t seed = 0;
  sim::Nanos duration = 0;
  std::string engine = "flow";
  sim::ClusterShape cluster;
  JobSpec job;
  std::vector<injectors::FaultSpec> faults;  // concrete: globs and Poisson onsets already drawn
  std::vector<DetectorSpec> detectors;
  std::string mitigation = "none";
  std::string source_path;
};

}  // namespace gauntlet::harness
