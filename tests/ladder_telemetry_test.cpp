// The falcon ladder decides from telemetry alone: it is handed the job only
// through models::JobControl, whose speeds are measured off the compute
// times the job published (the library links nothing that holds the fault's
// stored speed). On a throttled GPU it still takes the decision the stored
// speed would have led to: the micro-batch split balanced for that speed,
// and the even split back once the compute times show the GPU healthy.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "harness/mitigation/falcon_ladder.hpp"
#include "models/job_console.hpp"
#include "models/job_test_support.hpp"
#include "models/training_job.hpp"

namespace gauntlet {
namespace {

using sim::kSecond;

sim::ClusterShape cluster() { return models::testing::rail_pods(1, 9); }

// tp 8, dp 8: one replica per host, 8 micro-batches each.
models::JobSpec job() {
  models::JobSpec j;
  j.gpus = 64;
  j.parallelism = {8, 1, 8, 1};
  j.compute_per_iteration = 2 * kSecond;
  j.gradient_bytes = 200'000'000;
  j.microbatches = 8;
  j.checkpoint_interval = 0;
  j.spare_hosts = 1;
  return j;
}

struct LadderSeen {
  std::vector<std::pair<double, std::string>> actions;
  std::vector<int> split;  // micro-batches per replica while rebalanced
};

// h3.gpu2 at `speed` from 30 s to 150 s; a fail-slow alert naming it at 40 s.
LadderSeen run_ladder(double speed, harness::LadderThresholds thresholds = {}) {
  const std::string text = sim::run_isolated([speed, thresholds] {
    sim::Topology topology(cluster());
    sim::FlowEngine engine(topology, 7);
    sim::TelemetryBus bus;
    models::TrainingJob training(job(), topology, engine, bus);
    models::JobMeasurements measured(job());
    models::JobConsole console(training, measured);
    harness::LadderCosts costs;
    costs.rebalance = 5 * kSecond;
    harness::FalconLadderPolicy ladder(costs, thresholds);
    // The throttle's edges are announced, as the fault scheduler does.
    training.set_change_horizon([&engine] {
      for (sim::Nanos edge : {30 * kSecond, 150 * kSecond})
        if (engine.now() < edge) return edge;
      return 240 * kSecond;
    });
    engine.schedule_at(30 * kSecond, [&] { training.set_gpu_speed(3, 2, speed); });
    engine.schedule_at(150 * kSecond, [&] { training.set_gpu_speed(3, 2, 1.0); });
    std::ostringstream split;
    training.start(0, 240 * kSecond);
    for (sim::Nanos t = 0; t < 240 * kSecond;) {
      t += kSecond;
      engine.run_until(t);
      measured.observe(bus.drain(t));
      if (t == 40 * kSecond) {
        harness::Alert alert;
        alert.kind = "fail_slow";
        alert.time_s = 32;
        alert.suspects = {{"h3.gpu2", 1.0}};
        ladder.on_alert(alert, console, t);
      }
      ladder.on_tick(console, t);
      if (t == 140 * kSecond)
        for (int m : training.work_split().microbatches) split << m << " ";
    }
    std::ostringstream o;
    o << split.str() << "\n";
    for (const harness::MitigationAction& a : ladder.actions()) o << a.time_s << " " << a.action << "\n";
    return o.str();
  });
  std::istringstream in(text);
  LadderSeen seen;
  std::string line;
  std::getline(in, line);
  std::istringstream split(line);
  for (int m; split >> m;) seen.split.push_back(m);
  double at = 0;
  std::string action;
  while (in >> at >> action) seen.actions.push_back({at, action});
  return seen;
}

TEST(LadderFromTelemetry, RebalancesAsTheStoredSpeedWouldAndUndoesItOnceMeasuredHealthy) {
  for (double speed : {0.5, 0.7}) {
    SCOPED_TRACE(speed);
    const LadderSeen seen = run_ladder(speed);
    ASSERT_EQ(seen.actions.size(), 2u);
    EXPECT_EQ(seen.actions[0].second, "rebalance-microbatches");
    EXPECT_EQ(seen.actions[1].second, "even-split");
    // The split the fault's stored speed calls for, though the ladder never read it.
    std::vector<double> stored(8, 1.0);
    stored[3] = speed;
    EXPECT_EQ(seen.split, models::balance_microbatches(stored, 64, 1));
    // The recovery shows in the first iteration begun after it: within two
    // (rebalanced) iterations of about 2.5 s, and the next tick.
    EXPECT_GE(seen.actions[1].first, 150);
    EXPECT_LE(seen.actions[1].first, 150 + 2 * 3.0 + 1);
  }
}

// The speed below which a measured GPU counts as slow is the
// ladder.slow_gpu_speed attribute: at 0.6, a GPU measured at 0.7 is left
// alone and one at 0.5 is still balanced around.
TEST(LadderFromTelemetry, TheSlowGpuThresholdIsTheCalibrationAttribute) {
  sim::Calibration calibration;
  calibration.set(harness::kLadderSlowGpuSpeed, 0.6);
  const harness::LadderThresholds thresholds = harness::LadderThresholds::from(calibration);
  ASSERT_EQ(thresholds.slow_gpu_speed, 0.6);
  auto rebalanced = [](const LadderSeen& seen) {
    return std::any_of(seen.actions.begin(), seen.actions.end(),
                       [](const auto& a) { return a.second == "rebalance-microbatches"; });
  };
  EXPECT_FALSE(rebalanced(run_ladder(0.7, thresholds)));
  EXPECT_TRUE(rebalanced(run_ladder(0.5, thresholds)));
}

}  // namespace
}  // namespace gauntlet
