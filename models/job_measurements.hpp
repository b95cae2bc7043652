#pragma once
// What an operator measures of a running job, from its telemetry only: each
// worker's compute speed relative to a nominal GPU, read off the compute time
// its IterationRecords report against the compute its share of the work
// (its micro-batches, its stage's layers) takes on a nominal GPU by the job's
// spec. The latest iteration a worker reported counts.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/job_spec.hpp"
#include "models/placement.hpp"
#include "sim/proto/telemetry.pb.h"

namespace gauntlet::models {

class JobMeasurements {
 public:
  explicit JobMeasurements(const JobSpec& spec) : spec_(spec) {}

  // Reads the iteration records of a drained batch (steady runs included).
  void observe(const telemetry::Batch& batch);

  // The worker's measured speed (1 = nominal); nothing before it reported.
  std::optional<double> measured_worker_speed(const std::string& worker) const;
  // The rank's measured speed, capped at nominal; a rank not measured yet
  // counts as nominal.
  double measured_rank_speed(const Placement& placement, int rank) const;
  // The slowest rank's speed per DP replica / per pipeline stage.
  std::vector<double> measured_replica_speeds(const Placement& placement) const;
  std::vector<double> measured_stage_speeds(const Placement& placement) const;

 private:
  struct Reading {
    sim::Nanos end = 0;  // of the iteration it was read from
    double speed = 1;
  };
  void read(const telemetry::IterationRecord& record, sim::Nanos end);
  std::vector<double> slowest_by(const Placement& placement, int groups, int (*group_of)(const RankPlace&)) const;

  JobSpec spec_;
  std::map<std::string, Reading> latest_;  // by worker
};

}  // namespace gauntlet::models
