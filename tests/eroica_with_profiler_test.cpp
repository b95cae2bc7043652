#include "harness/detectors/eroica_detector.hpp"

#include <gtest/gtest.h>

#include "models/profiler.hpp"

namespace gauntlet::harness {
namespace {

using sim::kMillisecond;
using sim::kSecond;

// 4 hosts x 4 GPUs running 1 s of compute then a 200 ms allreduce per
// iteration, one iteration per batch, with the sim-side profiler in the loop
// exactly as the runner wires it.
class Loop {
 public:
  std::map<std::pair<int, int>, double> clock;  // throttled GPUs
  std::map<int, double> cpu;                    // contended hosts

  Loop()
      : profiler_(bus_,
                  {[this](int h, int g) {
                     return value(clock, {h, g});
                   },
                   [this](int h) { return cpu.count(h) ? cpu.at(h) : 1.0; }},
                  5) {}

  std::vector<Alert> step(EroicaDetector& detector) {
    telemetry::Batch batch = bus_.drain(clock_);  // summaries of windows that closed
    sim::Nanos slowest = 0;
    for (int w = 0; w < 16; ++w) slowest = std::max(slowest, compute(w));
    const sim::Nanos end = clock_ + slowest + 200 * kMillisecond;
    for (int w = 0; w < 16; ++w) {
      auto* it = batch.add_records()->mutable_iteration();
      it->set_worker(worker(w));
      it->set_iteration(iteration_);
      it->set_start_ns(clock_);
      it->set_end_ns(end);
      it->set_compute_ns(compute(w));
      auto* c = batch.add_records()->mutable_collective();
      c->set_communicator("dp");
      c->set_rank(static_cast<std::uint32_t>(w));
      c->set_worker(worker(w));
      c->set_peer(worker((w + 4) % 16));
      c->set_op("allreduce");
      c->set_bytes(1'000'000'000);
      c->set_sequence(iteration_);
      c->set_start_ns(clock_ + slowest);
      c->set_end_ns(end);
    }
    ++iteration_;
    clock_ = end;
    batch.set_until_ns(clock_);
    profiler_.observe(batch);
    detector.observe(batch);
    for (const ProfilingRequest& r : detector.take_profiling_requests()) {
      profiled_seconds += profiler_.start(clock_, r.duration, r.workers).window_seconds;
      ++windows;
    }
    return detector.take_alerts();
  }

  double profiled_seconds = 0;
  int windows = 0;

 private:
  static double value(const std::map<std::pair<int, int>, double>& m, std::pair<int, int> k) {
    return m.count(k) ? m.at(k) : 1.0;
  }
  static std::string worker(int w) { return "h" + std::to_string(w / 4) + ".gpu" + std::to_string(w % 4); }
  sim::Nanos compute(int w) const {
    const double c = cpu.count(w / 4) ? cpu.at(w / 4) : 1.0;
    return static_cast<sim::Nanos>(1000.0 * kMillisecond / (c * value(clock, {w / 4, w % 4})));
  }

  sim::TelemetryBus bus_;
  models::Profiler profiler_;
  sim::Nanos clock_ = 0;
  std::uint64_t iteration_ = 0;
};

EroicaConfig config() {
  EroicaConfig c;
  c.window = 10 * kSecond;
  c.cooldown = 60 * kSecond;
  return c;
}

std::vector<Alert> run(Loop& loop, EroicaDetector& detector, int iterations) {
  std::vector<Alert> all;
  for (int i = 0; i < iterations; ++i)
    for (Alert& a : loop.step(detector)) all.push_back(std::move(a));
  return all;
}

TEST(Eroica, ThrottledGpuIsLocalizedToThatGpu) {
  Loop loop;
  EroicaDetector detector(config(), nullptr);
  EXPECT_TRUE(run(loop, detector, 20).empty());
  EXPECT_EQ(loop.windows, 0);  // no slowdown, no profiling
  loop.clock[{2, 3}] = 0.75;
  auto alerts = run(loop, detector, 30);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].kind, "fail_slow");
  ASSERT_FALSE(alerts[0].suspects.empty());
  EXPECT_EQ(alerts[0].suspects[0].id, "h2.gpu3");
}

TEST(Eroica, OutlierFunctionsOfAThrottledGpuAreTheKernels) {
  std::vector<telemetry::ProfileSummary> summaries;
  // Drive a window by hand: the peer comparison on its summaries.
  sim::TelemetryBus bus;
  models::Profiler profiler(bus, {[](int h, int g) { return h == 1 && g == 0 ? 0.8 : 1.0; }, {}}, 3);
  profiler.start(0, 20 * kSecond, {});
  telemetry::Batch batch;
  for (int i = 0; i < 20; ++i)
    for (int w = 0; w < 16; ++w) {
      auto* it = batch.add_records()->mutable_iteration();
      it->set_worker("h" + std::to_string(w / 4) + ".gpu" + std::to_string(w % 4));
      it->set_iteration(static_cast<std::uint64_t>(i));
      it->set_start_ns(i * 1300 * kMillisecond);
      it->set_end_ns((i + 1) * 1300 * kMillisecond);
      it->set_compute_ns(w == 4 ? 1250 * kMillisecond : 1000 * kMillisecond);
    }
  batch.set_until_ns(30 * kSecond);
  profiler.observe(batch);
  const telemetry::Batch published = bus.drain(30 * kSecond);
  for (const auto& r : published.records()) summaries.push_back(r.profile());
  auto outliers = eroica_outliers(summaries, config(), nullptr);
  std::set<std::string> functions;
  for (const auto& o : outliers) {
    EXPECT_EQ(o.worker, "h1.gpu0");
    EXPECT_EQ(o.device, "h1.gpu0");
    EXPECT_DOUBLE_EQ(o.confidence, 1.0);  // its clock is below its peers'
    functions.insert(o.function);
  }
  EXPECT_TRUE(functions.count("forward"));
  EXPECT_TRUE(functions.count("backward"));
  EXPECT_FALSE(functions.count("dataloader"));
}

TEST(Eroica, CpuContentionIsTheHostCpuNotAGpu) {
  Loop loop;
  EroicaDetector detector(config(), nullptr);
  run(loop, detector, 20);
  loop.cpu[3] = 0.8;  // a 20% slower step on every GPU of h3
  auto alerts = run(loop, detector, 30);
  ASSERT_EQ(alerts.size(), 1u);
  ASSERT_FALSE(alerts[0].suspects.empty());
  EXPECT_EQ(alerts[0].suspects[0].id, "h3.cpu");
  for (const Suspect& s : alerts[0].suspects) EXPECT_EQ(s.id.find(".gpu"), std::string::npos) << s.id;
}

TEST(Eroica, ProfilingIsBoundedAndCounted) {
  Loop loop;
  EroicaDetector detector(config(), nullptr);
  run(loop, detector, 20);
  loop.clock[{0, 1}] = 0.7;
  // Long enough for two cooldowns: a lasting slowdown is still profiled once,
  // since the diagnosed level becomes the new baseline.
  run(loop, detector, 150);
  EXPECT_EQ(loop.windows, 1);
  EXPECT_EQ(detector.windows_requested(), 1u);
  EXPECT_DOUBLE_EQ(detector.profiling_seconds(), 10.0);
  EXPECT_DOUBLE_EQ(loop.profiled_seconds, 10.0);
  // A second, different slowdown later is profiled again.
  loop.cpu[2] = 0.5;  // slower than the throttled GPU, so the job slows again
  auto alerts = run(loop, detector, 60);
  EXPECT_EQ(loop.windows, 2);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].suspects[0].id, "h2.cpu");
}

TEST(Eroica, SlowCommunicationPointsAtTheRnicLink) {
  std::vector<telemetry::ProfileSummary> summaries;
  for (int w = 0; w < 8; ++w) {
    telemetry::ProfileSummary s;
    s.set_worker("h" + std::to_string(w) + ".gpu0");
    s.set_function("allreduce");
    s.set_calls(10);
    const bool slow = w == 5;
    s.set_total_ns((slow ? 400 : 200) * kMillisecond * 10 + w * kMillisecond);
    s.set_nic_gbps(slow ? 40 : 80);
    summaries.push_back(s);
  }
  sim::ClusterShape shape;
  shape.hosts = 8;
  shape.leaves = 1;
  shape.gpus_per_host = 1;
  shape.rnics_per_host = 1;
  const sim::Topology topology(shape);
  auto outliers = eroica_outliers(summaries, config(), &topology);
  ASSERT_EQ(outliers.size(), 1u);
  EXPECT_EQ(outliers[0].worker, "h5.gpu0");
  EXPECT_EQ(outliers[0].device, "h5.nic0~leaf0");
}

}  // namespace
}  // namespace gauntlet::harness
