#include "models/profiler.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace gauntlet::models {
namespace {

using sim::kMillisecond;
using sim::kSecond;

// 4 hosts x 4 GPUs; every iteration: compute (1 s nominal / speed), then one
// ring allreduce of 1 GB taking 200 ms (or `slow_comm` longer on one rank).
struct Cluster {
  std::map<std::pair<int, int>, double> clock;  // throttled GPUs
  std::map<int, double> cpu;                    // contended hosts
  std::string slow_comm_worker;
  double slow_comm = 1.0;

  HardwareState hardware() {
    return {[this](int h, int g) {
              return clock.count({h, g}) ? clock.at({h, g}) : 1.0;
            },
            [this](int h) { return cpu.count(h) ? cpu.at(h) : 1.0; }};
  }
  static std::string worker(int w) { return "h" + std::to_string(w / 4) + ".gpu" + std::to_string(w % 4); }

  // The job's compute on a worker: nominal / (cpu share x clock), as the
  // fault scheduler composes them.
  sim::Nanos compute(int w) {
    const double c = cpu.count(w / 4) ? cpu.at(w / 4) : 1.0;
    const double g = clock.count({w / 4, w % 4}) ? clock.at({w / 4, w % 4}) : 1.0;
    return static_cast<sim::Nanos>(1000.0 * kMillisecond / (c * g));
  }
  void fill(google::protobuf::RepeatedPtrField<telemetry::Record>* out, std::uint64_t i, sim::Nanos start,
            sim::Nanos* end) {
    sim::Nanos slowest = 0;
    for (int w = 0; w < 16; ++w) slowest = std::max(slowest, compute(w));
    *end = start + slowest + static_cast<sim::Nanos>(200 * kMillisecond * slow_comm);
    for (int w = 0; w < 16; ++w) {
      auto* it = out->Add()->mutable_iteration();
      it->set_worker(worker(w));
      it->set_iteration(i);
      it->set_start_ns(start);
      it->set_end_ns(*end);
      it->set_compute_ns(compute(w));
      auto* c = out->Add()->mutable_collective();
      c->set_communicator("dp");
      c->set_rank(static_cast<std::uint32_t>(w));
      c->set_worker(worker(w));
      c->set_peer(worker((w + 4) % 16));  // next hop on another host
      c->set_op("allreduce");
      c->set_bytes(1'000'000'000);
      c->set_sequence(i);
      c->set_start_ns(start + slowest);
      const double d = worker(w) == slow_comm_worker ? slow_comm : 1.0;
      c->set_end_ns(start + slowest + static_cast<sim::Nanos>(200 * kMillisecond * d));
    }
  }
};

// Runs iterations 0..count-1 one batch each, profiling [from, from + window).
std::map<std::pair<std::string, std::string>, telemetry::ProfileSummary> profile(Cluster& cluster, int count,
                                                                                 sim::Nanos from, sim::Nanos window,
                                                                                 ProfilingCost* cost = nullptr) {
  sim::TelemetryBus bus;
  Profiler profiler(bus, cluster.hardware(), 11);
  sim::Nanos clock = 0;
  bool started = false;
  std::map<std::pair<std::string, std::string>, telemetry::ProfileSummary> out;
  for (int i = 0; i < count; ++i) {
    if (!started && clock >= from) {
      const ProfilingCost c = profiler.start(clock, window, {});
      if (cost) *cost = c;
      started = true;
    }
    telemetry::Batch batch;
    sim::Nanos end = 0;
    cluster.fill(batch.mutable_records(), static_cast<std::uint64_t>(i), clock, &end);
    clock = end;
    batch.set_until_ns(clock);
    profiler.observe(batch);
    const telemetry::Batch published = bus.drain(clock);
    for (const auto& r : published.records())
      if (r.has_profile()) out[{r.profile().worker(), r.profile().function()}] = r.profile();
  }
  return out;
}

double per_call(const telemetry::ProfileSummary& s) { return static_cast<double>(s.total_ns()) / s.calls(); }

TEST(Profiler, ThrottledGpuShowsLongerKernelsAndALowerClock) {
  Cluster cluster;
  cluster.clock[{1, 2}] = 0.8;
  auto p = profile(cluster, 30, 5 * kSecond, 10 * kSecond);
  const auto& slow = p.at({"h1.gpu2", "backward"});
  const auto& peer = p.at({"h0.gpu0", "backward"});
  // The job stretches the 1 s step to 1.25 s; the host's 50 ms keep their
  // time, so the kernels carry the rest: (1.25 - 0.05) / 0.95 = 1.263x.
  EXPECT_NEAR(per_call(slow) / per_call(peer), 1.263, 0.02);
  EXPECT_NEAR(per_call(p.at({"h1.gpu2", "forward"})) / per_call(p.at({"h3.gpu1", "forward"})), 1.263, 0.02);
  EXPECT_NEAR(slow.gpu_clock_mhz(), 0.8 * 1980, 20);
  EXPECT_NEAR(peer.gpu_clock_mhz(), 1980, 20);
  // Host side untouched.
  EXPECT_NEAR(per_call(p.at({"h1.gpu2", "dataloader"})) / per_call(p.at({"h0.gpu0", "dataloader"})), 1.0, 0.02);
  EXPECT_LT(slow.cpu_utilization(), 0.5);
}

TEST(Profiler, CpuContentionStretchesTheDataloaderNotTheKernels) {
  Cluster cluster;
  cluster.cpu[2] = 0.8;  // 20% slowdown of every GPU's step on h2
  auto p = profile(cluster, 30, 5 * kSecond, 10 * kSecond);
  for (int g = 0; g < 4; ++g) {
    const std::string w = "h2.gpu" + std::to_string(g);
    EXPECT_NEAR(per_call(p.at({w, "backward"})) / per_call(p.at({"h0.gpu0", "backward"})), 1.0, 0.02);
    // The whole 250 ms stretch lands in the dataloader: 50 ms -> 300 ms.
    EXPECT_NEAR(per_call(p.at({w, "dataloader"})) / per_call(p.at({"h0.gpu0", "dataloader"})), 6.0, 0.1);
    EXPECT_GT(p.at({w, "dataloader"}).cpu_utilization(), 0.95);
    EXPECT_NEAR(p.at({w, "backward"}).gpu_clock_mhz(), 1980, 20);
  }
}

TEST(Profiler, SlowLinkShowsLongerAllreduceAndLowerNicThroughput) {
  Cluster cluster;
  cluster.slow_comm_worker = "h3.gpu1";
  cluster.slow_comm = 2.0;
  auto p = profile(cluster, 30, 5 * kSecond, 10 * kSecond);
  const auto& slow = p.at({"h3.gpu1", "allreduce"});
  const auto& peer = p.at({"h0.gpu1", "allreduce"});
  EXPECT_NEAR(per_call(slow) / per_call(peer), 2.0, 0.04);
  // A ring edge of 16 ranks carries 2 * 15/16 GB: 1.875 GB in 200 ms = 75 Gbit/s.
  EXPECT_NEAR(peer.nic_gbps(), 75, 1);
  EXPECT_NEAR(slow.nic_gbps(), 37.5, 1);
}

TEST(Profiler, OnlyTheWindowIsProfiledAndItsCostIsCounted) {
  Cluster cluster;
  ProfilingCost cost;
  // Iterations last 1.2 s; the window [6 s, 16 s) holds the iterations starting in it.
  auto p = profile(cluster, 40, 6 * kSecond, 10 * kSecond, &cost);
  const auto& s = p.at({"h0.gpu0", "forward"});
  EXPECT_GE(s.window_start_ns(), 6 * kSecond);
  EXPECT_EQ(s.window_end_ns() - s.window_start_ns(), 10 * kSecond);
  // Starts at 6.0, 7.2, ..., 15.6: nine iterations.
  EXPECT_EQ(s.calls(), 9u);
  EXPECT_DOUBLE_EQ(cost.window_seconds, 10.0);
  EXPECT_DOUBLE_EQ(cost.overhead_seconds, 10.0 * ProfilerSettings{}.overhead);
}

TEST(Profiler, SteadyRunsAreCountedWithoutExpansion) {
  Cluster cluster;
  sim::TelemetryBus bus;
  Profiler profiler(bus, cluster.hardware(), 3);
  profiler.start(0, 60 * kSecond, {"h0.gpu0"});
  telemetry::Batch batch;
  auto* run = batch.add_steady();
  sim::Nanos end = 0;
  cluster.fill(run->mutable_records(), 0, 0, &end);
  run->set_first_iteration(0);
  run->set_last_iteration(99);
  run->set_period_ns(end);  // 1.2 s
  batch.set_until_ns(100 * end);
  profiler.observe(batch);
  std::set<std::string> workers;
  std::uint64_t calls = 0;
  const telemetry::Batch published = bus.drain(batch.until_ns());
  for (const auto& r : published.records()) {
    workers.insert(r.profile().worker());
    if (r.profile().function() == "forward") calls = r.profile().calls();
  }
  EXPECT_EQ(workers, std::set<std::string>{"h0.gpu0"});  // only the requested worker
  EXPECT_EQ(calls, 50u);                                 // 60 s / 1.2 s
  EXPECT_EQ(profiler.open_windows(), 0u);
}

}  // namespace
}  // namespace gauntlet::models
