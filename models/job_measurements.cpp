#include "models/job_measurements.hpp"

#include <algorithm>
#include <cmath>

namespace gauntlet::models {
namespace {

// Compute times are whole nanoseconds: speeds are read to a millionth, so a
// steady GPU reads the same in every iteration.
constexpr double kSpeedSteps = 1e6;

}  // namespace

void JobMeasurements::observe(const telemetry::Batch& batch) {
  for (const telemetry::Record& record : batch.records())
    if (record.has_iteration()) read(record.iteration(), record.iteration().end_ns());
  for (const telemetry::SteadyRun& run : batch.steady()) {
    const auto repeats = static_cast<sim::Nanos>(run.last_iteration() - run.first_iteration());
    for (const telemetry::Record& record : run.records())
      if (record.has_iteration()) read(record.iteration(), record.iteration().end_ns() + repeats * run.period_ns());
  }
}

// The spec's compute phase holds (m + pp - 1) slots of which a rank is busy
// for its micro-batches, each slot scaled by its stage's share of the layers.
void JobMeasurements::read(const telemetry::IterationRecord& record, sim::Nanos end) {
  if (record.compute_ns() <= 0) return;
  Reading& reading = latest_[record.worker()];
  if (end < reading.end) return;
  const int pp = spec_.parallelism.pp, m = std::max(1, spec_.microbatches);
  const double slot = static_cast<double>(spec_.compute_per_iteration) / (m + pp - 1);
  const double microbatches = record.microbatches() > 0 ? record.microbatches() : m;
  const double layer_share =
      record.layers() > 0 ? static_cast<double>(record.layers()) / (spec_.total_layers() / pp) : 1.0;
  const double speed = slot * microbatches * layer_share / static_cast<double>(record.compute_ns());
  reading.end = end;
  reading.speed = std::round(speed * kSpeedSteps) / kSpeedSteps;
}

std::optional<double> JobMeasurements::measured_worker_speed(const std::string& worker) const {
  auto it = latest_.find(worker);
  if (it == latest_.end()) return std::nullopt;
  return it->second.speed;
}

double JobMeasurements::measured_rank_speed(const Placement& placement, int rank) const {
  return std::min(1.0, measured_worker_speed(placement.worker_name(rank)).value_or(1.0));
}

std::vector<double> JobMeasurements::slowest_by(const Placement& placement, int groups,
                                                int (*group_of)(const RankPlace&)) const {
  std::vector<double> out(static_cast<std::size_t>(groups), 1.0);
  for (int r = 0; r < placement.ranks(); ++r) {
    double& slowest = out[static_cast<std::size_t>(group_of(placement.rank(r)))];
    slowest = std::min(slowest, measured_rank_speed(placement, r));
  }
  return out;
}

std::vector<double> JobMeasurements::measured_replica_speeds(const Placement& placement) const {
  return slowest_by(placement, spec_.parallelism.dp, [](const RankPlace& p) { return p.dp; });
}

std::vector<double> JobMeasurements::measured_stage_speeds(const Placement& placement) const {
  return slowest_by(placement, spec_.parallelism.pp, [](const RankPlace& p) { return p.pp; });
}

}  // namespace gauntlet::models
