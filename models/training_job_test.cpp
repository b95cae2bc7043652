#include "models/training_job.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "sim/flow/flow_engine.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::models {
namespace {

sim::ClusterShape cluster() {
  sim::ClusterShape s;
  s.spines = 2;
  s.leaves = 16;
  s.hosts = 16;
  s.gpus_per_host = 8;
  s.rnics_per_host = 8;
  return s;
}

JobSpec job() {
  JobSpec j;
  j.gpus = 128;
  j.parallelism = {8, 2, 8, 1};
  j.compute_per_iteration = 2 * sim::kSecond;
  j.gradient_bytes = 1'000'000'000;
  j.activation_bytes = 50'000'000;
  j.microbatches = 4;
  j.checkpoint_interval = 2 * sim::kMinute;
  j.checkpoint_cost = 5 * sim::kSecond;
  j.collective_timeout = sim::kMinute;
  j.restart_cost = 30 * sim::kSecond;
  return j;
}

struct JobRun {
  std::vector<IterationSpan> timeline;
  std::uint64_t simulated = 0, executed = 0;
  std::size_t records = 0;  // iteration records, steady runs expanded
};

// Runs the job for `horizon`, throttling h3.gpu2 at `throttle_at` (if >= 0)
// and failing h6.gpu1 at `fail_at` (if >= 0) for 20 s.
JobRun run_job(bool fast_forward, sim::Nanos horizon, sim::Nanos throttle_at, double slowdown,
               sim::Nanos fail_at = -1) {
  std::string out = sim::run_isolated([=] {
    sim::Topology topology(cluster());
    sim::FlowEngine engine(topology, 3);
    sim::TelemetryBus bus;
    TrainingJob training(job(), topology, engine, bus);
    training.set_fast_forward(fast_forward);
    // Failures and repairs are not announced as changes: the job cuts its
    // steady run itself when a failure stops it.
    std::vector<sim::Nanos> changes = {throttle_at, horizon};
    std::sort(changes.begin(), changes.end());
    training.set_change_horizon([&engine, changes] {
      for (sim::Nanos t : changes)
        if (t > engine.now()) return t;
      return changes.back();
    });
    if (throttle_at >= 0) engine.schedule_at(throttle_at, [&] { training.set_gpu_speed(3, 2, 1.0 - slowdown); });
    if (fail_at >= 0) {
      engine.schedule_at(fail_at, [&] { training.fail_gpu(6, 1); });
      engine.schedule_at(fail_at + 20 * sim::kSecond, [&] { training.repair_gpu(6, 1); });
    }
    training.start(0, horizon);
    engine.run_until(horizon);
    const telemetry::Batch batch = bus.drain(horizon);
    std::size_t records = 0;
    for (const telemetry::Record& r : batch.records()) records += r.has_iteration() ? 1 : 0;
    for (const telemetry::SteadyRun& run : batch.steady())
      for (const telemetry::Record& r : run.records())
        records += r.has_iteration() ? run.last_iteration() - run.first_iteration() + 1 : 0;
    std::ostringstream o;
    o << training.simulated_iterations() << " " << training.executed_iterations() << " " << records;
    for (const IterationSpan& s : training.timeline())
      o << " " << s.first << " " << s.count << " " << s.start << " " << s.duration;
    return o.str();
  });
  std::istringstream in(out);
  JobRun run;
  in >> run.simulated >> run.executed >> run.records;
  IterationSpan s;
  while (in >> s.first >> s.count >> s.start >> s.duration) run.timeline.push_back(s);
  return run;
}

TEST(TrainingJob, ThrottledGpuStretchesComputeAndTheWholeJobFollows) {
  JobRun run = run_job(true, 120 * sim::kSecond, 30 * sim::kSecond, 0.2);
  ASSERT_GE(run.timeline.size(), 2u);
  const sim::Nanos before = run.timeline.front().duration;
  const sim::Nanos after = run.timeline.back().duration;
  // Compute goes from 2 s to 2 s / 0.8 = 2.5 s; communication is unchanged,
  // and every rank waits for the slow one.
  EXPECT_NEAR(static_cast<double>(after - before), 0.5e9, 1e6);
}

// Pipeline, checkpoints every 2 minutes, a throttle, and a GPU failure with
// its hang, watchdog crash, rollback and restart: skipping steady stretches
// must not change a single iteration.
TEST(TrainingJob, FastForwardMatchesFullSimulationAcrossCheckpointsAndACrash) {
  const sim::Nanos horizon = 12 * sim::kMinute;
  const sim::Nanos throttle = 3 * sim::kMinute, fail = 7 * sim::kMinute + 3 * sim::kSecond;
  JobRun fast = run_job(true, horizon, throttle, 0.3, fail);
  JobRun full = run_job(false, horizon, throttle, 0.3, fail);
  ASSERT_EQ(fast.timeline.size(), full.timeline.size());
  for (std::size_t i = 0; i < fast.timeline.size(); ++i) {
    EXPECT_EQ(fast.timeline[i].first, full.timeline[i].first);
    EXPECT_EQ(fast.timeline[i].count, full.timeline[i].count);
    EXPECT_EQ(fast.timeline[i].start, full.timeline[i].start);
    EXPECT_EQ(fast.timeline[i].duration, full.timeline[i].duration);
  }
  EXPECT_EQ(fast.executed, full.executed);
  EXPECT_GT(fast.executed, fast.timeline.back().first + fast.timeline.back().count);  // some work was redone
  // Every executed iteration left its records, skipped or not.
  EXPECT_EQ(fast.records, full.records);
  EXPECT_EQ(full.records, full.executed * 128);
  EXPECT_LT(fast.simulated * 5, full.simulated);
}

TEST(TrainingJob, FastForwardGivesTheSameTimelineAsFullSimulation) {
  const sim::Nanos horizon = 10 * sim::kMinute, throttle = 4 * sim::kMinute;
  JobRun fast = run_job(true, horizon, throttle, 0.3);
  JobRun full = run_job(false, horizon, throttle, 0.3);
  ASSERT_EQ(fast.timeline.size(), full.timeline.size());
  for (std::size_t i = 0; i < fast.timeline.size(); ++i) {
    EXPECT_EQ(fast.timeline[i].first, full.timeline[i].first);
    EXPECT_EQ(fast.timeline[i].count, full.timeline[i].count);
    EXPECT_EQ(fast.timeline[i].start, full.timeline[i].start);
    EXPECT_EQ(fast.timeline[i].duration, full.timeline[i].duration);
  }
  EXPECT_LT(fast.simulated * 10, full.simulated);  // and it skipped most of the work
}

TEST(Placement, TensorParallelStaysInAHostAndDataParallelSpansHosts) {
  sim::Topology topology(cluster());
  Placement p(job(), topology);
  ASSERT_EQ(p.dp_groups().size(), 16u);  // pp 2 x tp 8
  for (const DpGroup& g : p.dp_groups()) {
    ASSERT_EQ(g.ranks.size(), 8u);
    for (std::size_t i = 1; i < g.ranks.size(); ++i) {
      EXPECT_NE(p.rank(g.ranks[i]).host, p.rank(g.ranks[0]).host);
      EXPECT_EQ(p.rank(g.ranks[i]).gpu, p.rank(g.ranks[0]).gpu);
    }
  }
  EXPECT_EQ(p.worker_name(8 * 3 + 2), "h3.gpu2");
  JobSpec bad = job();
  bad.parallelism.dp = 7;
  EXPECT_THROW(Placement(bad, topology), std::invalid_argument);
}

// Steady runs that share a records_version repeat the same records apart
// from their times and sequence numbers, so readers may reuse what they
// derived; a changed iteration (the throttle) gets a new version.
TEST(TrainingJob, SteadyRunsOfOneSimulatedIterationShareTheirRecordsVersion) {
  static constexpr sim::Nanos horizon = 10 * sim::kMinute, throttle = 4 * sim::kMinute + 1;
  std::string out = sim::run_isolated([] {
    sim::Topology topology(cluster());
    sim::FlowEngine engine(topology, 3);
    sim::TelemetryBus bus;
    TrainingJob training(job(), topology, engine, bus);
    training.set_fast_forward(true);
    training.set_change_horizon([&engine] { return engine.now() < throttle ? throttle : horizon; });
    engine.schedule_at(throttle, [&] { training.set_gpu_speed(3, 2, 0.7); });
    training.start(0, horizon);
    engine.run_until(horizon);
    const telemetry::Batch batch = bus.drain(horizon);
    std::ostringstream o;
    for (const telemetry::SteadyRun& run : batch.steady()) {
      // The records with what a repeat may change cleared.
      std::string shape;
      bool before_throttle = false;
      for (telemetry::Record r : run.records()) {
        if (r.has_iteration()) before_throttle = r.iteration().start_ns() < throttle;
        if (r.has_iteration()) {
          const sim::Nanos length = r.iteration().end_ns() - r.iteration().start_ns();
          r.mutable_iteration()->set_iteration(0);
          r.mutable_iteration()->set_start_ns(0);
          r.mutable_iteration()->set_end_ns(length);
        } else if (r.has_collective()) {
          const sim::Nanos length = r.collective().end_ns() - r.collective().start_ns();
          r.mutable_collective()->set_sequence(0);
          r.mutable_collective()->set_start_ns(0);
          r.mutable_collective()->set_end_ns(length);
        }
        shape += r.SerializeAsString();
      }
      o << run.records_version() << " " << std::hash<std::string>{}(shape) << " " << before_throttle << "\n";
    }
    return o.str();
  });
  std::istringstream in(out);
  std::map<std::uint64_t, std::size_t> shape_of;
  std::map<std::uint64_t, int> runs_of;
  std::uint64_t version = 0, first_after_throttle_version = 0, last_before_throttle_version = 0;
  std::size_t shape = 0;
  bool before_throttle = false;
  while (in >> version >> shape >> before_throttle) {
    ASSERT_NE(version, 0u);
    auto [it, fresh] = shape_of.try_emplace(version, shape);
    EXPECT_EQ(it->second, shape) << "records_version " << version << " promised the same records";
    ++runs_of[version];
    if (before_throttle)
      last_before_throttle_version = version;
    else if (first_after_throttle_version == 0)
      first_after_throttle_version = version;
  }
  // Checkpoints split stretches of one simulated iteration: versions repeat.
  EXPECT_TRUE(std::any_of(runs_of.begin(), runs_of.end(), [](const auto& v) { return v.second >= 2; }));
  ASSERT_NE(first_after_throttle_version, 0u);
  EXPECT_NE(first_after_throttle_version, last_before_throttle_version);
  EXPECT_NE(shape_of.at(first_after_throttle_version), shape_of.at(last_before_throttle_version));
}

// The daily cycle (Llama 3, section 3.3.4: throughput moves 1-2% over a
// day) changes the fleet's pace between simulated iterations: the stretch
// in progress ends at its next boundary and the repeated iteration's time
// scales by the ratio of paces, without simulating an iteration again.
TEST(TrainingJob, APaceChangeScalesRepeatedIterationsWithoutSimulatingOne) {
  static constexpr sim::Nanos horizon = 9 * sim::kMinute, dip = 3 * sim::kMinute, back = 6 * sim::kMinute;
  static constexpr double kDippedPace = 0.985;  // fleet.daily_cycle's 1.5% at the hottest step
  auto run = [](bool cycle) {
    return sim::run_isolated([cycle] {
      sim::Topology topology(cluster());
      sim::FlowEngine engine(topology, 3);
      sim::TelemetryBus bus;
      JobSpec spec = job();
      spec.checkpoint_interval = 0;
      TrainingJob training(spec, topology, engine, bus);
      training.set_fast_forward(true);
      training.set_change_horizon([] { return horizon; });
      if (cycle) {
        engine.schedule_at(dip, [&] { training.set_fleet_pace(kDippedPace); });
        engine.schedule_at(back, [&] { training.set_fleet_pace(1.0); });
      }
      training.start(0, horizon);
      engine.run_until(horizon);
      const telemetry::Batch batch = bus.drain(horizon);
      std::ostringstream o;
      o << training.simulated_iterations();
      for (const telemetry::SteadyRun& steady : batch.steady())
        for (const telemetry::Record& r : steady.records())
          if (r.has_iteration() && r.iteration().worker() == "h0.gpu0")
            o << " " << r.iteration().start_ns() << " " << steady.period_ns() << " "
              << r.iteration().end_ns() - r.iteration().start_ns() << " " << steady.records_version();
      return o.str();
    });
  };
  std::istringstream steady_only(run(false)), cycled(run(true));
  std::uint64_t simulated_steady = 0, simulated_cycled = 0;
  steady_only >> simulated_steady;
  cycled >> simulated_cycled;
  EXPECT_EQ(simulated_cycled, simulated_steady) << "a pace change costs no simulated iteration";
  sim::Nanos start = 0, period = 0, length = 0, nominal = 0, dipped = 0, after = 0;
  std::uint64_t version = 0, nominal_version = 0, dipped_version = 0;
  while (cycled >> start >> period >> length >> version) {
    EXPECT_EQ(length, period) << "a stretch's iteration records span its period";
    if (start < dip) nominal = period, nominal_version = version;
    if (start >= dip && start < back) dipped = period, dipped_version = version;
    if (start >= back) after = period;
  }
  ASSERT_GT(nominal, 0);
  ASSERT_GT(dipped, 0);
  EXPECT_EQ(dipped, std::llround(static_cast<double>(nominal) / kDippedPace));
  EXPECT_NEAR(static_cast<double>(dipped - nominal) / static_cast<double>(nominal), 0.015, 0.001);
  EXPECT_EQ(after, nominal) << "the pace back at 1 gives the simulated iteration's time again";
  EXPECT_EQ(dipped_version, nominal_version) << "scaled records differ only in their times";
}

}  // namespace
}  // namespace gauntlet::models
