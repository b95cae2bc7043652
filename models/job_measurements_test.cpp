// JobMeasurements against the speeds the job really ran at: a rank's
// compute time, as its IterationRecords report it, against the compute its
// share of the work takes on a nominal GPU gives back the GPU's speed, with
// or without a work split and with fast-forward's steady runs.
#include "models/job_measurements.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "models/job_test_support.hpp"
#include "models/training_job.hpp"

namespace gauntlet::models {
namespace {

sim::ClusterShape cluster() { return testing::rail_pods(1, 8); }

// tp 8, pp 2, dp 4: each replica spans two hosts, one per stage.
JobSpec job() {
  JobSpec j;
  j.gpus = 64;
  j.parallelism = {8, 2, 4, 1};
  j.compute_per_iteration = 2 * sim::kSecond;
  j.gradient_bytes = 200'000'000;
  j.activation_bytes = 10'000'000;
  j.microbatches = 8;
  j.layers = 16;
  j.checkpoint_interval = 0;
  return j;
}

struct Measured {
  std::vector<double> replicas, stages;
  double slow_worker = 0;
};

// h3.gpu2 runs at `speed` from 10 s on; at 40 s the job takes `split`. The
// speeds measured from everything the job published up to `until`.
Measured measure(double speed, const WorkSplit& split, bool fast_forward, sim::Nanos until) {
  const std::string text = sim::run_isolated([=] {
    sim::Topology topology(cluster());
    sim::FlowEngine engine(topology, 3);
    sim::TelemetryBus bus;
    TrainingJob training(job(), topology, engine, bus);
    training.set_fast_forward(fast_forward);
    training.set_change_horizon(
        [&engine] { return engine.now() < 10 * sim::kSecond ? 10 * sim::kSecond : 40 * sim::kSecond; });
    JobMeasurements measured(job());
    engine.schedule_at(10 * sim::kSecond, [&] { training.set_gpu_speed(3, 2, speed); });
    engine.schedule_at(40 * sim::kSecond, [&] { training.apply_work_split(split, sim::kSecond); });
    training.start(0, until);
    for (sim::Nanos t = 0; t < until;) {
      t += 5 * sim::kSecond;
      engine.run_until(t);
      measured.observe(bus.drain(t));
    }
    std::ostringstream o;
    for (double s : measured.measured_replica_speeds(training.placement())) o << s << " ";
    o << "\n";
    for (double s : measured.measured_stage_speeds(training.placement())) o << s << " ";
    o << "\n" << measured.measured_worker_speed("h3.gpu2").value_or(-1);
    return o.str();
  });
  std::istringstream in(text);
  Measured m;
  std::string line;
  std::getline(in, line);
  std::istringstream replicas(line);
  for (double s; replicas >> s;) m.replicas.push_back(s);
  std::getline(in, line);
  std::istringstream stages(line);
  for (double s; stages >> s;) m.stages.push_back(s);
  in >> m.slow_worker;
  return m;
}

// The rank on h3.gpu2: host 3 holds stage 0 of replica 3 (hosts fill tp,
// then dp, then pp).
TEST(JobMeasurements, ComputeTimesGiveBackTheSpeedEachGpuRanAt) {
  for (bool fast_forward : {false, true}) {
    const Measured m = measure(0.6, {}, fast_forward, 35 * sim::kSecond);
    EXPECT_DOUBLE_EQ(m.slow_worker, 0.6) << fast_forward;
    EXPECT_EQ(m.replicas, (std::vector<double>{1, 1, 1, 0.6})) << fast_forward;
    EXPECT_EQ(m.stages, (std::vector<double>{0.6, 1})) << fast_forward;
  }
}

TEST(JobMeasurements, ASplitChangesTheWorkNotTheMeasuredSpeed) {
  WorkSplit split;
  split.microbatches = {10, 10, 10, 2};
  split.layers_per_stage = 8;
  split.stage_layers = {5, 11};
  for (bool fast_forward : {false, true}) {
    const Measured m = measure(0.45, split, fast_forward, 70 * sim::kSecond);
    EXPECT_DOUBLE_EQ(m.slow_worker, 0.45) << fast_forward;
    EXPECT_EQ(m.replicas, (std::vector<double>{1, 1, 1, 0.45})) << fast_forward;
    EXPECT_EQ(m.stages, (std::vector<double>{0.45, 1})) << fast_forward;
  }
}

TEST(JobMeasurements, NothingMeasuredBeforeAWorkerReports) {
  JobMeasurements measured(job());
  EXPECT_FALSE(measured.measured_worker_speed("h0.gpu0").has_value());
  telemetry::Batch batch;
  auto* it = batch.add_records()->mutable_iteration();
  it->set_worker("h0.gpu0");
  it->set_end_ns(3 * sim::kSecond);
  // 8 micro-batches of 9 slots of 2 s, at 80% speed.
  it->set_compute_ns(static_cast<sim::Nanos>(2e9 * 8 / 9 / 0.8));
  measured.observe(batch);
  EXPECT_DOUBLE_EQ(measured.measured_worker_speed("h0.gpu0").value_or(0), 0.8);
}

}  // namespace
}  // namespace gauntlet::models
