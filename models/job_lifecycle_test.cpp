// The job's lifecycle: checkpoints, hangs, the watchdog, restarts on spares,
// isolation and re-placement, with costs checked against their definitions.
#include <gtest/gtest.h>

#include <algorithm>

#include "models/job_test_support.hpp"

namespace gauntlet::models {
namespace {

using testing::JobEventSeen;
using testing::JobHarness;
using testing::JobReport;
using testing::run_job;
using Kind = telemetry::JobEvent;

// Two pods of 8 hosts; the job takes pod 0 (8 hosts), spares come from pod 1.
sim::ClusterShape cluster() { return testing::rail_pods(2, 8); }

JobSpec job() { return testing::tp8_pp2_dp4_job(); }

constexpr sim::Nanos kFail = 12 * sim::kMinute + 13 * sim::kSecond;

void fail_gpu_at(JobHarness& h, sim::Nanos at, sim::Nanos repair_at) {
  TrainingJob* job = &h.job;
  h.engine.schedule_at(at, [job] { job->fail_gpu(3, 2); });
  if (repair_at >= 0) h.engine.schedule_at(repair_at, [job] { job->repair_gpu(3, 2); });
  h.job.set_change_horizon([&engine = h.engine, at, repair_at] {
    if (engine.now() < at) return at;
    if (engine.now() < repair_at) return repair_at;
    return std::numeric_limits<sim::Nanos>::max();
  });
}

TEST(JobLifecycle, ACrashWithoutDetectorCostsTimeoutRestartAndWorkSinceCheckpoint) {
  const sim::Nanos horizon = 40 * sim::kMinute;
  const JobSpec spec = job();
  const JobReport clean = run_job(cluster(), spec, horizon, true);
  const JobReport r =
      run_job(cluster(), spec, horizon, true, [](JobHarness& h) { fail_gpu_at(h, kFail, kFail + sim::kMinute); });
  const JobEventSeen* crash = r.first(Kind::CRASH);
  const JobEventSeen* restart = r.first(Kind::RESTART);
  ASSERT_NE(crash, nullptr);
  ASSERT_NE(restart, nullptr);
  EXPECT_EQ(crash->time, kFail + spec.collective_timeout);
  EXPECT_EQ(crash->error, "NCCL Error");
  EXPECT_EQ(restart->time, crash->time + spec.restart_cost);
  sim::Nanos checkpoint = 0;
  for (const auto& e : r.events)
    if (e.kind == Kind::CHECKPOINT && e.time < kFail) checkpoint = e.time;
  ASSERT_GT(checkpoint, 0);
  const sim::Nanos d = clean.last_duration();
  // Rolled-back work is what ran between the checkpoint and the failure.
  EXPECT_NEAR(static_cast<double>(r.lost_time), static_cast<double>(kFail - checkpoint), static_cast<double>(d));
  EXPECT_EQ(r.executed - r.progress, static_cast<std::uint64_t>(r.lost_time / d));
  // The run ends behind the fault-free one by timeout + restart + that work.
  const double lost = static_cast<double>(spec.collective_timeout + spec.restart_cost + (kFail - checkpoint));
  EXPECT_NEAR(static_cast<double>(clean.progress - r.progress), lost / static_cast<double>(d), 2.0);
  // The timeline counts each iteration once.
  std::uint64_t next = 0;
  for (const IterationSpan& s : r.timeline) {
    EXPECT_EQ(s.first, next);
    next += s.count;
  }
  EXPECT_EQ(next, r.progress);
}

TEST(JobLifecycle, HungCollectiveShowsUnfinishedRanksAndNoneForTheDeadOne) {
  const JobReport r = run_job(cluster(), job(), 20 * sim::kMinute, true,
                              [](JobHarness& h) { fail_gpu_at(h, kFail, kFail + sim::kMinute); });
  // 16 DP rings (2 stages x 8 rails) of 4 ranks; the failed GPU's ring has 3 waiting.
  EXPECT_EQ(r.unfinished.size(), 16u * 4u - 1u);
  for (const auto& c : r.unfinished) {
    EXPECT_NE(c.worker, "h3.gpu2");
    EXPECT_EQ(c.start, kFail);
    EXPECT_EQ(c.op, "allreduce");
  }
  const auto in_ring = std::count_if(r.unfinished.begin(), r.unfinished.end(),
                                     [](const auto& c) { return c.communicator == "dp.pp0.tp2"; });
  EXPECT_EQ(in_ring, 3);
}

TEST(JobLifecycle, RestartsOnASpareWhenTheHardwareStaysBroken) {
  JobSpec spec = job();
  spec.spare_hosts = 1;
  const JobReport r =
      run_job(cluster(), spec, 30 * sim::kMinute, true, [](JobHarness& h) { fail_gpu_at(h, kFail, -1); });
  EXPECT_EQ(r.count(Kind::RESTART), 1);
  EXPECT_EQ(r.spares_used, 1);
  EXPECT_EQ(std::count(r.hosts.begin(), r.hosts.end(), 3), 0);
  EXPECT_EQ(std::count(r.hosts.begin(), r.hosts.end(), 8), 1);  // the spare took slot 3
  EXPECT_EQ(r.hosts[3], 8);

  // Without a spare the job waits for a repair that never comes.
  const JobReport stuck =
      run_job(cluster(), job(), 30 * sim::kMinute, true, [](JobHarness& h) { fail_gpu_at(h, kFail, -1); });
  EXPECT_EQ(stuck.count(Kind::CRASH), 1);
  EXPECT_EQ(stuck.count(Kind::RESTART), 0);
  EXPECT_LE(stuck.progress * stuck.timeline.front().duration, kFail);
}

// A re-placement due while a broken host waits for its spare: the spare
// fills the broken slot and then the usable hosts shift, each used once
// (the scenario fuzzer found the shift moving a slot onto that spare first).
TEST(JobLifecycle, AReconfigurationWhileWaitingForASpareUsesEachHostOnce) {
  JobSpec spec = job();
  spec.spare_hosts = 1;
  const JobReport r = run_job(cluster(), spec, 30 * sim::kMinute, true, [](JobHarness& h) {
    fail_gpu_at(h, kFail, -1);
    TrainingJob* job = &h.job;
    h.engine.schedule_at(kFail + sim::kSecond, [job] { job->reconfigure(); });
  });
  ASSERT_EQ(r.count(Kind::RESTART), 1);
  EXPECT_EQ(r.spares_used, 1);
  std::vector<int> hosts = r.hosts;
  std::sort(hosts.begin(), hosts.end());
  EXPECT_EQ(std::adjacent_find(hosts.begin(), hosts.end()), hosts.end());
  EXPECT_EQ(std::count(r.hosts.begin(), r.hosts.end(), 3), 0);
  // h0, h1, h2, h4..h7 and the spare h8, each moved one place on.
  EXPECT_EQ(r.hosts, (std::vector<int>{1, 2, 4, 0, 5, 6, 7, 8}));
}

TEST(JobLifecycle, IsolationRestartsNowOnSparesAndAFalseOneStillCostsARestart) {
  JobSpec spec = job();
  spec.spare_hosts = 1;
  const sim::Nanos at = 10 * sim::kMinute + 7 * sim::kSecond;
  int taken_first = -1, taken_second = -1;
  const JobReport r = run_job(cluster(), spec, 30 * sim::kMinute, true, [&](JobHarness& h) {
    TrainingJob* job = &h.job;
    auto taken = std::make_shared<std::pair<int, int>>(-1, -1);
    h.keep = taken;
    h.engine.schedule_at(at, [job, taken] { taken->first = job->isolate({"h2.nic1"}); });
    h.engine.schedule_at(at + 10 * sim::kMinute, [job, taken] { taken->second = job->isolate({"h5"}); });
    h.probe = [taken] { return std::to_string(taken->first) + " " + std::to_string(taken->second); };
  });
  std::istringstream(r.extra) >> taken_first >> taken_second;
  EXPECT_EQ(taken_first, 1);
  EXPECT_EQ(taken_second, 0);  // no spare left: h5 stays, the job restarts in place
  EXPECT_EQ(r.count(Kind::ISOLATION), 2);
  EXPECT_EQ(r.count(Kind::CRASH), 0);
  ASSERT_EQ(r.count(Kind::RESTART), 2);
  EXPECT_EQ(r.first(Kind::RESTART)->time, at + spec.restart_cost);
  EXPECT_EQ(std::count(r.hosts.begin(), r.hosts.end(), 2), 0);
  EXPECT_EQ(std::count(r.hosts.begin(), r.hosts.end(), 5), 1);
}

TEST(JobLifecycle, ReconfigurationMovesTheEndpointsButNotTheIterationTime) {
  JobSpec spec = job();
  spec.checkpoint_interval = sim::kHour;
  spec.checkpoint_cost = 5 * sim::kSecond;
  const sim::Nanos horizon = 20 * sim::kMinute, at = 7 * sim::kMinute;
  const JobReport clean = run_job(cluster(), spec, horizon, true);
  const JobReport r = run_job(cluster(), spec, horizon, true, [at](JobHarness& h) {
    TrainingJob* job = &h.job;
    h.engine.schedule_at(at, [job] { job->reconfigure(); });
    h.job.set_change_horizon(
        [&engine = h.engine, at] { return engine.now() < at ? at : std::numeric_limits<sim::Nanos>::max(); });
  });
  EXPECT_EQ(r.count(Kind::CRASH), 0);
  EXPECT_EQ(r.count(Kind::RESTART), 1);
  EXPECT_NE(r.talking, clean.talking);
  EXPECT_NE(r.hosts, clean.hosts);
  EXPECT_EQ(r.last_duration(), clean.last_duration());
  // Nothing rolled back: the cost is the checkpoint write and the restart.
  EXPECT_EQ(r.lost_time, 0);
  const double cost = static_cast<double>(spec.checkpoint_cost + spec.restart_cost);
  EXPECT_NEAR(static_cast<double>(clean.progress - r.progress), cost / static_cast<double>(clean.last_duration()), 1.0);
}

// A reconfiguration that comes while a checkpoint is being written waits for
// the next iteration boundary, fast-forwarded or not (the scenario fuzzer
// found fast-forward carrying it past a whole stretch instead).
TEST(JobLifecycle, AReconfigurationDuringACheckpointWriteAppliesAtTheNextIteration) {
  JobSpec spec = job();
  spec.checkpoint_interval = 2 * sim::kMinute;
  spec.checkpoint_cost = 20 * sim::kSecond;
  const sim::Nanos horizon = 8 * sim::kMinute;
  const JobReport clean = run_job(cluster(), spec, horizon, true);
  const sim::Nanos written = clean.first(Kind::CHECKPOINT)->time;  // the write ends here
  const sim::Nanos at = written - 10 * sim::kSecond;
  const auto reconfigure_at = [at](JobHarness& h) {
    TrainingJob* job = &h.job;
    h.engine.schedule_at(at, [job] { job->reconfigure(); });
    h.job.set_change_horizon(
        [&engine = h.engine, at] { return engine.now() < at ? at : std::numeric_limits<sim::Nanos>::max(); });
  };
  const JobReport fast = run_job(cluster(), spec, horizon, true, reconfigure_at);
  const JobReport full = run_job(cluster(), spec, horizon, false, reconfigure_at);
  ASSERT_EQ(fast.count(Kind::RESTART), 1);
  // One iteration after the write, a second checkpoint (the reconfiguration's) and the restart.
  EXPECT_EQ(fast.first(Kind::RESTART)->time,
            written + clean.last_duration() + spec.checkpoint_cost + spec.restart_cost);
  ASSERT_EQ(fast.timeline.size(), full.timeline.size());
  for (std::size_t i = 0; i < fast.timeline.size(); ++i) {
    EXPECT_EQ(fast.timeline[i].first, full.timeline[i].first);
    EXPECT_EQ(fast.timeline[i].start, full.timeline[i].start);
  }
  EXPECT_EQ(fast.progress, full.progress);
}

TEST(JobLifecycle, CheckpointsComeEveryIntervalAndCostTheirWriteTime) {
  JobSpec spec = job();
  spec.checkpoint_cost = 10 * sim::kSecond;
  const JobReport r = run_job(cluster(), spec, 32 * sim::kMinute, true);
  ASSERT_EQ(r.count(Kind::CHECKPOINT), 6);
  sim::Nanos previous = 0;
  for (const auto& e : r.events) {
    if (e.kind != Kind::CHECKPOINT) continue;
    // Due an interval after the previous one ended; written at the first
    // iteration boundary after that, then cost seconds later.
    const sim::Nanos gap = e.time - previous;
    EXPECT_GE(gap, spec.checkpoint_interval + spec.checkpoint_cost);
    EXPECT_LT(gap, spec.checkpoint_interval + spec.checkpoint_cost + r.last_duration());
    previous = e.time;
  }
}

}  // namespace
}  // namespace gauntlet::models
