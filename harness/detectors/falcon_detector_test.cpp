#include "harness/detectors/falcon_detector.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numbers>

#include "harness/detectors/registry.hpp"
#include "sim/rng.hpp"

namespace gauntlet::harness {
namespace {

using sim::kMillisecond;
using sim::kSecond;

// Synthetic telemetry of a 16-GPU synchronous job (4 hosts x 4 GPUs): each
// worker computes ~1 s, then everyone meets in an allreduce of ~200 ms that
// ends when the slowest worker's part is done.
class SyntheticJob {
 public:
  explicit SyntheticJob(std::uint64_t seed, double noise = 0.01)
      : rng_(sim::RngStreams(seed).stream("falcon-test")), noise_(noise) {}

  static std::string worker(int w) { return "h" + std::to_string(w / 4) + ".gpu" + std::to_string(w % 4); }
  static constexpr int kWorkers = 16;

  // slow: per-worker compute multiplier; comm: allreduce time multiplier.
  telemetry::Batch next(const std::vector<double>& slow = {}, double comm = 1.0) {
    telemetry::Batch b;
    fill(b.mutable_records(), iteration_, clock_, slow, comm);
    clock_ = end_;
    b.set_until_ns(end_);
    ++iteration_;
    return b;
  }
  // Iterations first..first+count-1 as one steady run; returns its batch.
  telemetry::Batch steady(std::uint64_t count, const std::vector<double>& slow = {}, double comm = 1.0) {
    telemetry::Batch b;
    auto* run = b.add_steady();
    run->set_first_iteration(iteration_);
    run->set_last_iteration(iteration_ + count - 1);
    const sim::Nanos start = clock_;
    fill(run->mutable_records(), iteration_, start, slow, comm);
    const sim::Nanos period = end_ - start;
    run->set_period_ns(period);
    iteration_ += count;
    clock_ = start + static_cast<sim::Nanos>(count) * period;
    b.set_until_ns(clock_);
    return b;
  }
  std::uint64_t iteration() const { return iteration_; }
  sim::Nanos clock() const { return clock_; }

 private:
  double jitter() {
    double u1 = 1.0 - rng_.uniform(), u2 = rng_.uniform();
    return 1.0 + noise_ * std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
  }
  void fill(google::protobuf::RepeatedPtrField<telemetry::Record>* out, std::uint64_t i, sim::Nanos start,
            const std::vector<double>& slow, double comm) {
    std::vector<sim::Nanos> compute(kWorkers);
    sim::Nanos slowest = 0;
    for (int w = 0; w < kWorkers; ++w) {
      double m = w < static_cast<int>(slow.size()) ? slow[static_cast<std::size_t>(w)] : 1.0;
      compute[static_cast<std::size_t>(w)] = static_cast<sim::Nanos>(1000.0 * kMillisecond * m * jitter());
      slowest = std::max(slowest, compute[static_cast<std::size_t>(w)]);
    }
    end_ = start + slowest + static_cast<sim::Nanos>(200.0 * kMillisecond * comm * jitter());
    for (int w = 0; w < kWorkers; ++w) {
      auto* c = out->Add()->mutable_collective();
      c->set_communicator("dp");
      c->set_rank(static_cast<std::uint32_t>(w));
      c->set_worker(worker(w));
      c->set_op("allreduce");
      c->set_sequence(i);
      c->set_start_ns(start + compute[static_cast<std::size_t>(w)]);
      c->set_end_ns(end_);
    }
    for (int w = 0; w < kWorkers; ++w) {
      auto* it = out->Add()->mutable_iteration();
      it->set_worker(worker(w));
      it->set_iteration(i);
      it->set_start_ns(start);
      it->set_end_ns(end_);
      it->set_compute_ns(compute[static_cast<std::size_t>(w)]);
    }
  }

  sim::Rng rng_;
  double noise_;
  std::uint64_t iteration_ = 0;
  sim::Nanos clock_ = 0;
  sim::Nanos end_ = 0;
};

constexpr int kSlowWorker = 14;  // h3.gpu2

// The changepoint and profiling stages alone, alerting on the profile.
FalconConfig profile_only() {
  FalconConfig c;
  c.validate = false;
  return c;
}

std::vector<double> slow_one(double factor) {
  std::vector<double> s(SyntheticJob::kWorkers, 1.0);
  s[kSlowWorker] = factor;
  return s;
}

struct Seen {
  std::vector<Alert> alerts;
  std::vector<std::uint64_t> at_iteration;  // the iteration whose batch raised each alert
};

void run(FalconDetector& d, SyntheticJob& job, int iterations, const std::vector<double>& slow, Seen& seen,
         double comm = 1.0) {
  for (int i = 0; i < iterations; ++i) {
    const std::uint64_t it = job.iteration();
    d.observe(job.next(slow, comm));
    for (auto& a : d.take_alerts()) {
      seen.alerts.push_back(a);
      seen.at_iteration.push_back(it);
    }
  }
}

TEST(FalconDetector, ComputeSlowdownIsDetectedAndLocalized) {
  for (std::uint64_t seed : {1, 2, 3}) {
    FalconDetector d(profile_only());
    SyntheticJob job(seed);
    Seen seen;
    run(d, job, 200, {}, seen);
    EXPECT_TRUE(seen.alerts.empty()) << "seed " << seed;
    run(d, job, 200, slow_one(1.2), seen);
    ASSERT_EQ(seen.alerts.size(), 1u) << "seed " << seed;
    const Alert& a = seen.alerts[0];
    EXPECT_EQ(a.detector, "falcon");
    EXPECT_EQ(a.kind, "fail_slow");
    EXPECT_GE(seen.at_iteration[0], 209u);
    EXPECT_LE(seen.at_iteration[0], 230u);
    ASSERT_FALSE(a.suspects.empty());
    EXPECT_EQ(a.suspects[0].id, "h3.gpu2");
    EXPECT_EQ(a.suspects.size(), 1u);
    EXPECT_NEAR(a.suspects[0].score, 1.2, 0.03);
    EXPECT_EQ(d.accepted_changepoints(), 1u);
  }
}

TEST(FalconDetector, StationaryNoisyRunRaisesNothing) {
  for (std::uint64_t seed : {4, 5, 6}) {
    FalconDetector d(profile_only());
    SyntheticJob job(seed, 0.03);
    Seen seen;
    run(d, job, 1000, {}, seen);
    EXPECT_TRUE(seen.alerts.empty()) << "seed " << seed;
  }
}

TEST(FalconDetector, CheckpointSpikesRaiseNothing) {
  FalconDetector d(profile_only());
  SyntheticJob job(12);
  Seen seen;
  for (int i = 0; i < 10; ++i) {
    run(d, job, 99, {}, seen);
    run(d, job, 1, std::vector<double>(SyntheticJob::kWorkers, 1.8), seen);  // every worker saves a checkpoint
  }
  EXPECT_TRUE(seen.alerts.empty());
}

TEST(FalconDetector, SmallShiftRaisesNothing) {
  FalconDetector d(profile_only());
  SyntheticJob job(7);
  Seen seen;
  run(d, job, 200, {}, seen);
  // 6% slower compute on one worker lengthens the iteration by about 5%.
  run(d, job, 300, slow_one(1.06), seen);
  EXPECT_TRUE(seen.alerts.empty());
}

TEST(FalconDetector, MinShiftIsOverridable) {
  DetectorRegistry reg = builtin_detectors();
  std::string error;
  auto params = reg.resolve(*reg.find("falcon"), {{"min_shift", "0.2"}, {"validate", "0"}}, &error);
  ASSERT_TRUE(params) << error;
  DetectorContext ctx;
  ctx.params = *params;
  auto d = reg.find("falcon")->make(ctx);
  SyntheticJob job(8);
  int alerts = 0;
  for (int i = 0; i < 400; ++i) {
    d->observe(job.next(i >= 200 ? slow_one(1.2) : std::vector<double>{}));
    alerts += static_cast<int>(d->take_alerts().size());
  }
  EXPECT_EQ(alerts, 0);  // a ~17% slowdown is below the 20% the scenario asked for
}

TEST(FalconDetector, CommunicationSlowdownHasNoComputeSuspect) {
  FalconDetector d(profile_only());
  SyntheticJob job(9);
  Seen seen;
  run(d, job, 200, {}, seen);
  run(d, job, 100, {}, seen, 2.0);  // allreduce twice as slow for everyone
  ASSERT_EQ(seen.alerts.size(), 1u);
  for (const auto& s : seen.alerts[0].suspects) EXPECT_NE(s.id, "h3.gpu2");
  EXPECT_TRUE(seen.alerts[0].suspects.empty());  // everyone waits equally: nobody stands out
}

TEST(FalconDetector, SteadyRunsAreConsumedWithoutExpansion) {
  FalconDetector d(profile_only());
  SyntheticJob job(10);
  Seen seen;
  run(d, job, 200, {}, seen);
  // A month of steady iterations costs at most steady_copies observations.
  d.observe(job.steady(2'000'000));
  EXPECT_TRUE(d.take_alerts().empty());
  EXPECT_LE(d.observations(), 200u + 64u);
  // The slowdown begins with a steady run: detected inside it, at the time of
  // the iteration that confirmed it.
  const sim::Nanos before = job.clock();
  const std::uint64_t first = job.iteration();
  d.observe(job.steady(1'000'000, slow_one(1.25)));
  auto alerts = d.take_alerts();
  ASSERT_EQ(alerts.size(), 1u);
  ASSERT_FALSE(alerts[0].suspects.empty());
  EXPECT_EQ(alerts[0].suspects[0].id, "h3.gpu2");
  EXPECT_GT(alerts[0].time_s, sim::to_seconds(before));
  EXPECT_LT(alerts[0].time_s, sim::to_seconds(before) + 40 * 1.5);  // within ~30 iterations of its start
  EXPECT_LE(d.observations(), 200u + 128u);
  // Back to normal (a recovery: no alert), then single iterations again.
  d.observe(job.steady(1'000'000));
  run(d, job, 50, {}, seen);
  EXPECT_TRUE(d.take_alerts().empty());
  EXPECT_TRUE(seen.alerts.empty());
  EXPECT_EQ(d.accepted_changepoints(), 2u);
  EXPECT_GT(job.iteration(), first + 2'000'000);
}

TEST(FalconDetector, SecondSlowdownAfterRecoveryAlertsAgain) {
  FalconDetector d(profile_only());
  SyntheticJob job(11);
  Seen seen;
  run(d, job, 150, {}, seen);
  run(d, job, 100, slow_one(1.3), seen);
  run(d, job, 100, {}, seen);
  auto other = std::vector<double>(SyntheticJob::kWorkers, 1.0);
  other[3] = 1.3;  // h0.gpu3
  run(d, job, 100, other, seen);
  ASSERT_EQ(seen.alerts.size(), 2u);
  EXPECT_EQ(seen.alerts[0].suspects.at(0).id, "h3.gpu2");
  EXPECT_EQ(seen.alerts[1].suspects.at(0).id, "h0.gpu3");
  EXPECT_EQ(d.accepted_changepoints(), 3u);
}

// Validation: after the profile, falcon asks for benchmarks and alerts on
// their answer. `gemm` gives each worker's GEMM time relative to nominal.
struct Validated {
  std::vector<BenchmarkRequest> requests;
  std::vector<Alert> alerts;
};

// GEMM results for every worker (factor: time relative to nominal) and
// allreduce results per communicator, as the simulator publishes them.
telemetry::Batch benchmark_batch(const SyntheticJob& job, const std::map<std::string, double>& gemm,
                                 const std::map<std::string, double>& rings) {
  telemetry::Batch results;
  for (int w = 0; w < SyntheticJob::kWorkers; ++w) {
    auto* b = results.add_records()->mutable_benchmark();
    b->set_detector("falcon");
    b->set_kind("gemm");
    b->set_target(SyntheticJob::worker(w));
    const auto it = gemm.find(SyntheticJob::worker(w));
    b->set_duration_ns(static_cast<sim::Nanos>(200.0 * kMillisecond * (it == gemm.end() ? 1.0 : it->second)));
    b->set_time_ns(job.clock() + b->duration_ns());
  }
  for (const auto& [communicator, factor] : rings) {
    auto* b = results.add_records()->mutable_benchmark();
    b->set_detector("falcon");
    b->set_kind("allreduce");
    b->set_target(communicator);
    b->set_duration_ns(static_cast<sim::Nanos>(40.0 * kMillisecond * factor));
    b->set_time_ns(job.clock() + b->duration_ns());
  }
  results.set_until_ns(job.clock() + kSecond);
  return results;
}

Validated validate_slowdown(const std::vector<double>& slow, const std::map<std::string, double>& gemm,
                            const std::map<std::string, double>& rings, bool answer = true) {
  FalconDetector d({});
  SyntheticJob job(21);
  Validated out;
  bool calibrated = false;
  for (int i = 0; i < 400 && out.requests.empty(); ++i) {
    d.observe(job.next(i >= 200 ? slow : std::vector<double>{}));
    auto alerts = d.take_alerts();
    out.alerts.insert(out.alerts.end(), alerts.begin(), alerts.end());
    auto requests = d.take_benchmark_requests();
    if (requests.empty()) continue;
    if (!calibrated) {  // early in the run: one GEMM round for the healthy reference
      EXPECT_LT(i, 200);
      EXPECT_EQ(requests.size(), 1u);
      EXPECT_EQ(requests[0].kind, "gemm");
      d.observe(benchmark_batch(job, {}, {}));
      calibrated = true;
      continue;
    }
    out.requests = requests;
  }
  EXPECT_TRUE(out.alerts.empty());  // nothing before the benchmarks answer
  if (!answer) {
    for (int i = 0; i < 400 && out.alerts.empty(); ++i) {
      d.observe(job.next(slow));
      out.alerts = d.take_alerts();
    }
    return out;
  }
  d.observe(benchmark_batch(job, gemm, rings));
  out.alerts = d.take_alerts();
  return out;
}

const std::map<std::string, double> kHealthyRings = {{"dp.a", 1.0}, {"dp.b", 1.0}, {"dp.c", 1.0}};

TEST(FalconValidation, AsksForGemmAndAllreduceBenchmarks) {
  const Validated v = validate_slowdown(slow_one(1.2), {}, kHealthyRings);
  ASSERT_EQ(v.requests.size(), 2u);
  EXPECT_EQ(v.requests[0].kind, "gemm");
  EXPECT_EQ(v.requests[1].kind, "allreduce");
}

TEST(FalconValidation, GemmFarAboveItsPeersIsTheComputeSuspect) {
  const Validated v = validate_slowdown(slow_one(2.5), {{"h3.gpu2", 2.5}}, kHealthyRings);
  ASSERT_EQ(v.alerts.size(), 1u);
  EXPECT_EQ(v.alerts[0].kind, "fail_slow");
  ASSERT_EQ(v.alerts[0].suspects.size(), 1u);
  EXPECT_EQ(v.alerts[0].suspects[0].id, "h3.gpu2");
  EXPECT_NEAR(v.alerts[0].suspects[0].score, 2.5, 0.01);
}

TEST(FalconValidation, GemmBelowThresholdThatExplainsTheProfileKeepsTheGpu) {
  // 20% slower: under the 2x GEMM threshold, but the GEMM accounts for the profile.
  const Validated v = validate_slowdown(slow_one(1.25), {{"h3.gpu2", 1.25}}, kHealthyRings);
  ASSERT_EQ(v.alerts.size(), 1u);
  ASSERT_FALSE(v.alerts[0].suspects.empty());
  EXPECT_EQ(v.alerts[0].suspects[0].id, "h3.gpu2");
}

TEST(FalconValidation, NormalGemmOnProfiledGpusNamesTheirHostCpu) {
  // Every GPU of h3 computes 25% slower (its CPU is starved) but their GEMMs are normal.
  std::vector<double> slow(SyntheticJob::kWorkers, 1.0);
  for (int w = 12; w < 16; ++w) slow[static_cast<std::size_t>(w)] = 1.25;
  const Validated v = validate_slowdown(slow, {}, kHealthyRings);
  ASSERT_EQ(v.alerts.size(), 1u);
  EXPECT_EQ(v.alerts[0].kind, "fail_slow");
  ASSERT_EQ(v.alerts[0].suspects.size(), 1u);
  EXPECT_EQ(v.alerts[0].suspects[0].id, "h3.cpu");
}

TEST(FalconValidation, SlowAllreduceGroupIsCommunication) {
  const Validated v = validate_slowdown(slow_one(1.25), {}, {{"dp.a", 1.0}, {"dp.b", 1.3}, {"dp.c", 1.0}});
  ASSERT_EQ(v.alerts.size(), 1u);
  EXPECT_EQ(v.alerts[0].kind, "network");
}

TEST(FalconValidation, UnansweredBenchmarksFallBackToTheProfile) {
  const Validated v = validate_slowdown(slow_one(1.25), {}, {}, false);
  ASSERT_EQ(v.alerts.size(), 1u);
  ASSERT_FALSE(v.alerts[0].suspects.empty());
  EXPECT_EQ(v.alerts[0].suspects[0].id, "h3.gpu2");
}

TEST(FalconValidation, UniformSlowdownWithHealthyGemmsIsTheHostsCpu) {
  // A one-host cause for everyone (nobody stands out from its peers): the
  // GEMMs match the healthy reference, so the hosts' CPUs, not the GPUs.
  const std::vector<double> all(SyntheticJob::kWorkers, 1.3);
  const Validated v = validate_slowdown(all, {}, kHealthyRings);
  ASSERT_EQ(v.alerts.size(), 1u);
  ASSERT_EQ(v.alerts[0].suspects.size(), 4u);
  for (const Suspect& s : v.alerts[0].suspects) EXPECT_TRUE(s.id.ends_with(".cpu")) << s.id;
}

TEST(FalconValidation, UniformSlowdownWithSlowGemmsIsTheGpus) {
  const std::vector<double> all(SyntheticJob::kWorkers, 1.3);
  std::map<std::string, double> gemm;
  for (int w = 0; w < SyntheticJob::kWorkers; ++w) gemm[SyntheticJob::worker(w)] = 1.3;
  const Validated v = validate_slowdown(all, gemm, kHealthyRings);
  ASSERT_EQ(v.alerts.size(), 1u);
  ASSERT_EQ(v.alerts[0].suspects.size(), 16u);
  for (const Suspect& s : v.alerts[0].suspects) EXPECT_NE(s.id.find(".gpu"), std::string::npos) << s.id;
}

}  // namespace
}  // namespace gauntlet::harness
