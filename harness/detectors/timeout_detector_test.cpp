#include "harness/detectors/timeout_detector.hpp"

#include <gtest/gtest.h>

#include "harness/detectors/registry.hpp"

namespace gauntlet::harness {
namespace {

using sim::kMinute;
using sim::kSecond;

std::string gpu(int h, int k) { return "h" + std::to_string(h) + ".gpu" + std::to_string(k); }

// A data-parallel job of `hosts` x 2 GPUs, one allreduce communicator, one
// collective and one iteration record per worker per 10 s iteration.
struct Job {
  int hosts = 4;
  sim::Nanos period = 10 * kSecond;
  std::uint64_t next_iteration = 0;

  int workers() const { return hosts * 2; }
  std::string worker(int rank) const { return gpu(rank / 2, rank % 2); }

  static void add_collective(telemetry::Batch& b, int rank, const std::string& w, std::uint64_t seq, sim::Nanos start,
                             sim::Nanos end) {
    auto* c = b.add_records()->mutable_collective();
    c->set_communicator("dp0");
    c->set_rank(static_cast<std::uint32_t>(rank));
    c->set_worker(w);
    c->set_op("allreduce");
    c->set_sequence(seq);
    c->set_start_ns(start);
    c->set_end_ns(end);
  }
  // One iteration; rank slow_rank computes `slowdown` times longer than the rest.
  telemetry::Batch iteration(int slow_rank = -1, double slowdown = 1.0) {
    telemetry::Batch b;
    const std::uint64_t i = next_iteration++;
    const sim::Nanos start = static_cast<sim::Nanos>(i) * period;
    const sim::Nanos compute = 8 * kSecond;
    const sim::Nanos slowest = static_cast<sim::Nanos>(static_cast<double>(compute) * slowdown);
    const sim::Nanos end = start + slowest + 2 * kSecond;
    for (int r = 0; r < workers(); ++r) add_collective(b, r, worker(r), i, start + compute, end);
    for (int r = 0; r < workers(); ++r) {
      auto* it = b.add_records()->mutable_iteration();
      it->set_worker(worker(r));
      it->set_iteration(i);
      it->set_start_ns(start);
      it->set_end_ns(end);
      it->set_compute_ns(r == slow_rank ? slowest : compute);
    }
    b.set_until_ns(end);
    return b;
  }
};

std::vector<Alert> feed(Detector& d, const telemetry::Batch& b) {
  d.observe(b);
  return d.take_alerts();
}

telemetry::Batch quiet(sim::Nanos until) {
  telemetry::Batch b;
  b.set_until_ns(until);
  return b;
}

TEST(TimeoutDetector, HangIsReportedOnlyAfterTheTimeoutThenDiagnosed) {
  TimeoutDetector d({});
  Job job;
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(feed(d, job.iteration()).empty());
  // Iteration 5: every rank but 5 (h2.gpu1) enters the allreduce and waits forever.
  telemetry::Batch hang;
  const sim::Nanos start = 5 * job.period + 8 * kSecond;
  for (int r = 0; r < job.workers(); ++r)
    if (r != 5) Job::add_collective(hang, r, job.worker(r), 5, start, 0);
  hang.set_until_ns(start);
  EXPECT_TRUE(feed(d, hang).empty());
  EXPECT_TRUE(feed(d, quiet(start + 29 * kMinute)).empty());
  EXPECT_TRUE(feed(d, quiet(start + 30 * kMinute - 1)).empty());

  auto page = feed(d, quiet(start + 31 * kMinute));
  ASSERT_EQ(page.size(), 1u);
  EXPECT_EQ(page[0].kind, "fail_stop");
  EXPECT_EQ(page[0].detector, "timeout");
  EXPECT_DOUBLE_EQ(page[0].time_s, sim::to_seconds(start + 30 * kMinute));
  EXPECT_TRUE(page[0].suspects.empty());

  // The NCCL watchdog's crash at the same moment is the same incident.
  telemetry::Batch crash;
  auto* e = crash.add_records()->mutable_job();
  e->set_kind(telemetry::JobEvent::CRASH);
  e->set_time_ns(start + 31 * kMinute);
  e->set_error("NCCL Error");
  crash.set_until_ns(start + 2 * sim::kHour);
  EXPECT_TRUE(feed(d, crash).empty());

  auto diag = feed(d, quiet(start + 30 * kMinute + 3 * sim::kHour));
  ASSERT_EQ(diag.size(), 1u);
  EXPECT_DOUBLE_EQ(diag[0].time_s, sim::to_seconds(start + 30 * kMinute + 3 * sim::kHour));
  ASSERT_EQ(diag[0].suspects.size(), 2u);
  EXPECT_EQ(diag[0].suspects[0].id, "h2.gpu1");  // the GPU that never entered, then its host
  EXPECT_EQ(diag[0].suspects[1].id, "h2");
  EXPECT_TRUE(feed(d, quiet(start + 10 * sim::kHour)).empty());
}

TEST(TimeoutDetector, WholeHostHangNamesTheHost) {
  TimeoutDetector d({});
  Job job;
  for (int i = 0; i < 3; ++i) feed(d, job.iteration());
  telemetry::Batch hang;
  const sim::Nanos start = 3 * job.period + 8 * kSecond;
  for (int r = 0; r < job.workers(); ++r)
    if (r / 2 != 1) Job::add_collective(hang, r, job.worker(r), 3, start, 0);
  hang.set_until_ns(start + 4 * sim::kHour);
  auto alerts = feed(d, hang);
  ASSERT_EQ(alerts.size(), 2u);
  EXPECT_TRUE(alerts[0].suspects.empty());
  ASSERT_GE(alerts[1].suspects.size(), 1u);
  EXPECT_EQ(alerts[1].suspects[0].id, "h1");
  EXPECT_LT(alerts[0].time_s, alerts[1].time_s);
}

TEST(TimeoutDetector, CrashWithoutHangAndShorterTimeoutParameter) {
  DetectorRegistry reg = builtin_detectors();
  std::string error;
  auto params =
      reg.resolve(*reg.find("timeout"),
                  {{"collective_timeout", "10m"}, {"manual_diagnosis", "1h"}, {"page_on_timeout", "false"}}, &error);
  ASSERT_TRUE(params) << error;
  DetectorContext ctx;
  ctx.params = *params;
  auto d = reg.find("timeout")->make(ctx);
  Job job;
  for (int i = 0; i < 3; ++i) feed(*d, job.iteration());
  telemetry::Batch crash;
  auto* e = crash.add_records()->mutable_job();
  e->set_kind(telemetry::JobEvent::CRASH);
  e->set_time_ns(100 * kSecond);
  crash.set_until_ns(100 * kSecond);
  EXPECT_TRUE(feed(*d, crash).empty());  // no page: only the diagnosis speaks
  EXPECT_TRUE(feed(*d, quiet(100 * kSecond + sim::kHour - 1)).empty());
  auto diag = feed(*d, quiet(100 * kSecond + sim::kHour));
  ASSERT_EQ(diag.size(), 1u);
  EXPECT_EQ(diag[0].kind, "fail_stop");
  EXPECT_TRUE(diag[0].suspects.empty());  // nothing in the telemetry points anywhere
}

TEST(TimeoutDetector, FailSlowRaisesNothing) {
  TimeoutDetector d({});
  Job job;
  std::vector<Alert> all;
  for (int i = 0; i < 2000; ++i) {
    auto a = feed(d, job.iteration(i >= 100 ? 3 : -1, i >= 100 ? 3.0 : 1.0));
    all.insert(all.end(), a.begin(), a.end());
  }
  // A steady stretch of a slow job, one hour later.
  telemetry::Batch steady;
  auto src = job.iteration(3, 3.0);
  auto* run = steady.add_steady();
  run->set_first_iteration(job.next_iteration - 1);
  run->set_last_iteration(job.next_iteration + 100000);
  run->set_period_ns(job.period);
  *run->mutable_records() = src.records();
  steady.set_until_ns(src.until_ns() + 100001 * job.period);
  auto a = feed(d, steady);
  all.insert(all.end(), a.begin(), a.end());
  EXPECT_TRUE(all.empty());
}

TEST(TimeoutDetector, MembershipLearnedFromSteadyRunsLocatesTheMissingRank) {
  TimeoutDetector d({});
  Job job;
  auto src = job.iteration();
  telemetry::Batch steady;
  auto* run = steady.add_steady();
  run->set_first_iteration(0);
  run->set_last_iteration(999'999);
  run->set_period_ns(job.period);
  *run->mutable_records() = src.records();
  steady.set_until_ns(1'000'000 * job.period);
  EXPECT_TRUE(feed(d, steady).empty());
  telemetry::Batch hang;
  const sim::Nanos start = 1'000'000 * job.period + 8 * kSecond;
  for (int r = 0; r < job.workers(); ++r)
    if (r != 6) Job::add_collective(hang, r, job.worker(r), 1'000'000, start, 0);
  hang.set_until_ns(start + 4 * sim::kHour);
  auto alerts = feed(d, hang);
  ASSERT_EQ(alerts.size(), 2u);
  ASSERT_FALSE(alerts[1].suspects.empty());
  EXPECT_EQ(alerts[1].suspects[0].id, "h3.gpu0");
}

TEST(TimeoutDetector, SuspectLevelHostNamesOnlyHosts) {
  TimeoutConfig c;
  c.suspect = TimeoutConfig::Level::host;
  TimeoutDetector d(c);
  Job job;
  feed(d, job.iteration());
  telemetry::Batch hang;
  for (int r = 0; r < job.workers(); ++r)
    if (r != 1) Job::add_collective(hang, r, job.worker(r), 1, 15 * kSecond, 0);
  hang.set_until_ns(5 * sim::kHour);
  auto alerts = feed(d, hang);
  ASSERT_EQ(alerts.size(), 2u);
  ASSERT_EQ(alerts[1].suspects.size(), 1u);
  EXPECT_EQ(alerts[1].suspects[0].id, "h0");
}

TEST(TimeoutDetector, RecoveryRearmsForTheNextHang) {
  TimeoutDetector d({});
  Job job;
  feed(d, job.iteration());
  telemetry::Batch hang;
  Job::add_collective(hang, 0, job.worker(0), 1, 20 * kSecond, 0);
  hang.set_until_ns(40 * kMinute);
  EXPECT_EQ(feed(d, hang).size(), 1u);
  telemetry::Batch restart;
  auto* e = restart.add_records()->mutable_job();
  e->set_kind(telemetry::JobEvent::RESTART);
  e->set_time_ns(45 * kMinute);
  restart.set_until_ns(45 * kMinute);
  feed(d, restart);
  telemetry::Batch hang2;
  Job::add_collective(hang2, 0, job.worker(0), 1, 50 * kMinute, 0);
  hang2.set_until_ns(90 * kMinute);
  auto alerts = feed(d, hang2);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_DOUBLE_EQ(alerts[0].time_s, sim::to_seconds(80 * kMinute));
}

}  // namespace
}  // namespace gauntlet::harness
