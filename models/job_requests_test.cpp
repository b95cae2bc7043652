// What detectors may ask of the job and the cluster: collective records
// that carry each rank's own entry, steady stretches cut or paused at a
// request, and validation benchmarks read off the physical state.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <tuple>

#include "models/benchmark_service.hpp"
#include "models/job_console.hpp"
#include "models/simulated_gpus.hpp"
#include "models/training_job.hpp"
#include "sim/flow/flow_engine.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::models {
namespace {

using sim::kSecond;

sim::ClusterShape cluster() {
  sim::ClusterShape s;
  s.spines = 2;
  s.leaves = 4;
  s.hosts = 4;
  s.gpus_per_host = 4;
  s.rnics_per_host = 4;
  return s;
}

// 16 GPUs: tp 4 inside each host, one data-parallel ring of 4 per rail.
JobSpec job() {
  JobSpec j;
  j.gpus = 16;
  j.parallelism = {4, 1, 4, 1};
  j.compute_per_iteration = kSecond;
  j.gradient_bytes = 1'000'000'000;
  j.checkpoint_interval = 0;
  return j;
}

// One data-parallel allreduce record: communicator, rank, sequence, entry, end.
using Entry = std::tuple<std::string, std::uint32_t, std::uint64_t, sim::Nanos, sim::Nanos, std::string>;

void collect(const telemetry::Record& r, sim::Nanos shift, std::uint64_t sequence, std::vector<Entry>* out) {
  if (!r.has_collective() || !r.collective().communicator().starts_with("dp.")) return;
  const auto& c = r.collective();
  out->emplace_back(c.communicator(), c.rank(), sequence, c.start_ns() + shift, c.end_ns() + shift, c.worker());
}

// Every data-parallel record of a run with h1.gpu2 at half speed from 30 s,
// steady runs expanded; `hold_at` >= 0 holds the job then for `pause`.
struct Recorded {
  std::vector<Entry> entries;
  std::vector<IterationSpan> timeline;
  sim::Nanos held_at = -1;
};

Recorded record_run(bool fast_forward, sim::Nanos hold_at = -1, sim::Nanos pause = 0, sim::Nanos cut_at = -1) {
  const std::string text = sim::run_isolated([=] {
    sim::Topology topology(cluster());
    sim::FlowEngine engine(topology, 5);
    sim::TelemetryBus bus;
    TrainingJob training(job(), topology, engine, bus);
    training.set_fast_forward(fast_forward);
    const sim::Nanos throttle = 30 * kSecond, horizon = 2 * sim::kMinute;
    training.set_change_horizon([&engine, throttle, horizon] { return engine.now() < throttle ? throttle : horizon; });
    engine.schedule_at(throttle, [&] { training.set_gpu_speed(1, 2, 0.5); });
    sim::Nanos held_at = -1;
    if (hold_at >= 0)
      engine.schedule_at(hold_at, [&, pause] {
        training.hold([&, pause] {
          held_at = engine.now();
          engine.schedule_at(engine.now() + pause, [&] { training.release(); });
        });
      });
    if (cut_at >= 0) engine.schedule_at(cut_at, [&] { training.cut_steady_run(); });
    training.start(0, horizon);
    engine.run_until(horizon);
    const telemetry::Batch batch = bus.drain(horizon);
    std::vector<Entry> entries;
    for (const auto& r : batch.records()) collect(r, 0, r.has_collective() ? r.collective().sequence() : 0, &entries);
    for (const auto& s : batch.steady())
      for (std::uint64_t i = s.first_iteration(); i <= s.last_iteration(); ++i)
        for (const auto& r : s.records())
          collect(r, static_cast<sim::Nanos>(i - s.first_iteration()) * s.period_ns(), i, &entries);
    std::sort(entries.begin(), entries.end());
    std::ostringstream o;
    o << held_at << " " << batch.steady_size() << "\n";
    for (const IterationSpan& s : training.timeline())
      o << s.first << " " << s.count << " " << s.start << " " << s.duration << "\n";
    o << "-\n";
    for (const auto& [comm, rank, seq, start, end, worker] : entries)
      o << comm << " " << rank << " " << seq << " " << start << " " << end << " " << worker << "\n";
    return o.str();
  });
  std::istringstream in(text);
  Recorded out;
  int steady = 0;
  in >> out.held_at >> steady;
  std::string word;
  while (in >> word && word != "-") {
    IterationSpan s;
    s.first = std::stoull(word);
    in >> s.count >> s.start >> s.duration;
    out.timeline.push_back(s);
  }
  Entry e;
  while (in >> std::get<0>(e) >> std::get<1>(e) >> std::get<2>(e) >> std::get<3>(e) >> std::get<4>(e) >> std::get<5>(e))
    out.entries.push_back(e);
  return out;
}

TEST(CollectiveEntry, ASlowGpuEntersLateAndItsPeersWait) {
  const Recorded r = record_run(true);
  // The rail-2 ring after the throttle: h1.gpu2 computes 2 s instead of 1 s.
  std::map<std::string, sim::Nanos> entry, end;
  const std::uint64_t late_iteration = r.timeline.back().first;
  for (const auto& [comm, rank, seq, start, finish, worker] : r.entries)
    if (seq == late_iteration && worker.ends_with(".gpu2")) {
      entry[worker] = start;
      end[worker] = finish;
    }
  ASSERT_TRUE(entry.count("h1.gpu2"));
  ASSERT_TRUE(entry.count("h0.gpu2"));
  EXPECT_EQ(entry["h1.gpu2"] - entry["h0.gpu2"], kSecond);  // 1 s / 0.5 - 1 s
  EXPECT_EQ(entry["h0.gpu2"], entry["h2.gpu2"]);
  for (const auto& [worker, start] : entry) EXPECT_LE(start, entry["h1.gpu2"]) << worker;
  // Everyone leaves together after the ring, so the waiting shows as time in the collective.
  EXPECT_GT(end["h0.gpu2"] - entry["h0.gpu2"], end["h1.gpu2"] - entry["h1.gpu2"] + kSecond / 2);
}

TEST(CollectiveEntry, FastForwardPublishesTheSameRecords) {
  const Recorded fast = record_run(true), full = record_run(false);
  ASSERT_FALSE(full.entries.empty());
  EXPECT_EQ(fast.entries, full.entries);
}

TEST(JobRequests, CutStretchKeepsEveryRecord) {
  EXPECT_EQ(record_run(true, -1, 0, 75 * kSecond + kSecond / 3).entries, record_run(false).entries);
}

TEST(JobRequests, HoldStopsTheJobAtAnIterationBoundaryForThePause) {
  const Recorded unheld = record_run(true);
  const sim::Nanos pause = 10 * kSecond;
  const Recorded held = record_run(true, 75 * kSecond + kSecond / 3, pause);
  ASSERT_GE(held.held_at, 75 * kSecond);
  // The job stopped where an iteration ended and resumed exactly a pause later.
  bool boundary = false, resumed = false;
  for (const IterationSpan& s : held.timeline) {
    boundary = boundary || s.start + static_cast<sim::Nanos>(s.count) * s.duration == held.held_at;
    resumed = resumed || s.start == held.held_at + pause;
  }
  EXPECT_TRUE(boundary);
  EXPECT_TRUE(resumed);
  // It lost the pause's worth of iterations (within the one the horizon cuts).
  const double slow = static_cast<double>(unheld.timeline.back().duration);
  auto count = [](const Recorded& r) {
    std::uint64_t n = 0;
    for (const IterationSpan& s : r.timeline) n += s.count;
    return static_cast<double>(n);
  };
  EXPECT_NEAR(count(unheld) - count(held), static_cast<double>(pause) / slow, 1.0);
}

// Benchmarks with h1.gpu2 at half clock and h1.nic2's host link at a quarter
// of its bandwidth: the GEMM sees the clock, the rail-2 ring sees the link.
TEST(BenchmarkService, GemmFollowsTheClockAndRingsFollowTheirPaths) {
  const std::string text = sim::run_isolated([] {
    sim::Topology topology(cluster());
    sim::FlowEngine engine(topology, 5);
    sim::TelemetryBus bus;
    TrainingJob training(job(), topology, engine, bus);
    training.set_change_horizon([] { return 2 * sim::kMinute; });
    engine.set_link_state(topology.host_link(topology.endpoint(1, 2)), {0.25, 0, true});
    BenchmarkSettings settings;
    JobMeasurements measured(job());
    JobConsole console(training, measured);
    BenchmarkService service(
        engine, console, bus,
        simulated_gpus(training.cluster(), [](int h, int g) { return h == 1 && g == 2 ? 0.5 : 1.0; }), 5, settings);
    engine.schedule_at(10 * kSecond, [&] {
      service.submit({"falcon", "gemm", {}});
      service.submit({"falcon", "allreduce", {}});
    });
    training.start(0, 2 * sim::kMinute);
    engine.run_until(2 * sim::kMinute);
    std::ostringstream o;
    const BenchmarkCost cost = service.cost("falcon");
    o << cost.benchmarks << " " << cost.pause_seconds << "\n";
    const telemetry::Batch batch = bus.drain(2 * sim::kMinute);
    for (const auto& r : batch.records())
      if (r.has_benchmark())
        o << r.benchmark().kind() << " " << r.benchmark().target() << " " << r.benchmark().duration_ns() << "\n";
    return o.str();
  });
  std::istringstream in(text);
  int benchmarks = 0;
  double pause_s = 0;
  in >> benchmarks >> pause_s;
  std::map<std::string, double> gemm, ring;
  std::string kind, target;
  double ns = 0;
  while (in >> kind >> target >> ns) (kind == "gemm" ? gemm : ring)[target] = ns;
  EXPECT_EQ(benchmarks, 2);
  ASSERT_EQ(gemm.size(), 16u);
  ASSERT_EQ(ring.size(), 4u);
  EXPECT_NEAR(gemm["h1.gpu2"], 0.4e9, 0.4e9 * 0.006);  // 200 ms at half clock, 0.5% jitter
  EXPECT_NEAR(gemm["h0.gpu2"], 0.2e9, 0.2e9 * 0.006);
  std::vector<double> rings;
  for (const auto& [c, t] : ring) rings.push_back(t);
  std::sort(rings.begin(), rings.end());
  // The rail-2 ring crosses the slowed link both ways: about four times as long.
  EXPECT_GT(rings.back(), 3.5 * rings.front());
  EXPECT_NEAR(rings[1], rings.front(), rings.front() * 0.02);
  // Training was paused for the GEMMs, then the rings.
  EXPECT_NEAR(pause_s, (gemm["h1.gpu2"] + rings.back()) / 1e9, 0.01);
}

}  // namespace
}  // namespace gauntlet::models
