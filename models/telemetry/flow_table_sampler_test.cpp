#include "models/telemetry/flow_table_sampler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>

#include "models/ring_allreduce.hpp"
#include "models/telemetry/flow_table_job_run.hpp"
#include "sim/component_id.hpp"

namespace gauntlet::models {
namespace {

using sim::kSecond;
using Entry = std::pair<sim::EndpointId, sim::EndpointId>;     // table's RNIC, peer
using Series = std::map<sim::Nanos, std::map<Entry, double>>;  // per second (its end, in s)

// 8 hosts x 8 GPUs x 8 RNICs, one pod of 8 rail leaves.
sim::ClusterShape cluster() {
  sim::ClusterShape s;
  s.spines = 2;
  s.leaves = 8;
  s.hosts = 8;
  s.gpus_per_host = 8;
  s.rnics_per_host = 8;
  return s;
}

sim::EndpointId endpoint_of(const sim::Topology& t, const std::string& name, bool table) {
  auto id = sim::ComponentId::parse(name);
  EXPECT_TRUE(id && id->kind == (table ? sim::ComponentKind::flow_table : sim::ComponentKind::nic)) << name;
  return id ? t.endpoint(id->host, id->index) : -1;
}

// The per-second counters the batches describe, FlowTableRuns expanded as
// telemetry.proto defines them (each repeat's bytes spread evenly over its
// interval, counted per second).
Series expand(const sim::Topology& t, const std::vector<telemetry::Batch>& batches) {
  Series out;
  for (const telemetry::Batch& b : batches) {
    for (const telemetry::Record& r : b.records())
      if (r.has_flow_table()) {
        const auto& s = r.flow_table();
        EXPECT_EQ(s.time_ns() % kSecond, 0);
        for (const auto& e : s.entries()) {
          EXPECT_GT(e.bytes(), 0u);
          EXPECT_EQ(e.packets(), (e.bytes() + 4095) / 4096);
          out[s.time_ns() / kSecond][{endpoint_of(t, s.table(), true), endpoint_of(t, e.peer(), false)}] +=
              static_cast<double>(e.bytes());
        }
      }
    for (const telemetry::FlowTableRun& run : b.flow_table_runs())
      for (std::uint64_t i = 0; i < run.repeats(); ++i)
        for (const telemetry::FlowBurst& burst : run.bursts()) {
          const Entry key{endpoint_of(t, burst.table(), true), endpoint_of(t, burst.peer(), false)};
          const sim::Nanos from = burst.from_ns() + static_cast<sim::Nanos>(i) * run.period_ns();
          const sim::Nanos to = burst.to_ns() + static_cast<sim::Nanos>(i) * run.period_ns();
          if (to <= from) {
            out[from / kSecond + 1][key] += static_cast<double>(burst.bytes());
            continue;
          }
          for (sim::Nanos s = from / kSecond + 1; s <= (to - 1) / kSecond + 1; ++s) {
            const sim::Nanos a = std::max(from, (s - 1) * kSecond), z = std::min(to, s * kSecond);
            const double share = static_cast<double>(z - a) / static_cast<double>(to - from);
            out[s][key] += static_cast<double>(burst.bytes()) * share;
          }
        }
  }
  return out;
}

std::map<Entry, double> totals(const Series& series) {
  std::map<Entry, double> out;
  for (const auto& [second, entries] : series)
    for (const auto& [entry, bytes] : entries) out[entry] += bytes;
  return out;
}

// Transfers on an otherwise idle 400 Gb/s path: a second counts the bytes
// that left in it, and seconds without traffic publish nothing.
TEST(FlowTableSampler, SecondsCountTheBytesThatLeftInThem) {
  const std::string text = sim::run_isolated([] {
    sim::Topology topology(cluster());
    sim::FlowEngine engine(topology, 1);
    FlowTableSampler sampler(engine);
    const sim::EndpointId a = topology.endpoint(0, 0), b = topology.endpoint(1, 0), c = topology.endpoint(2, 3);
    engine.schedule_at(990 * sim::kMillisecond, [&] { engine.start_transfer(a, b, 5e9, [](sim::Nanos) {}); });
    engine.schedule_at(3200 * sim::kMillisecond, [&] { engine.start_transfer(a, b, 1e9, [](sim::Nanos) {}); });
    // Intra-host traffic rides NVLink, never an RNIC.
    engine.schedule_at(3200 * sim::kMillisecond, [&] { engine.start_transfer(a, a + 1, 1e9, [](sim::Nanos) {}); });
    engine.schedule_at(5500 * sim::kMillisecond,
                       [&] { sampler.add_replayed(c, a, 5500 * sim::kMillisecond, 6500 * sim::kMillisecond, 2e9); });
    std::vector<telemetry::Batch> batches;
    std::string out;
    for (sim::Nanos t = kSecond; t <= 8 * kSecond; t += kSecond) {
      engine.run_until(t);
      telemetry::Batch batch;
      batch.set_until_ns(t);
      sampler.sample(t, &batch);
      for (const auto& r : batch.records())
        for (const auto& e : r.flow_table().entries())
          out += std::to_string(t / kSecond) + " " + r.flow_table().table() + " " + e.peer() + " " +
                 std::to_string(e.bytes()) + "\n";
    }
    return out;
  });
  std::map<std::pair<long long, std::string>, double> seen;  // (second, table>peer) -> bytes
  std::istringstream in(text);
  long long second;
  std::string table, peer;
  double bytes;
  while (in >> second >> table >> peer >> bytes) seen[{second, table + ">" + peer}] += bytes;
  auto at = [&seen](long long s, const std::string& entry) { return seen[std::pair{s, entry}]; };
  // 5 GB at 50 GB/s from 0.99 s: 10 ms of it in the first second, 90 ms in the second.
  EXPECT_NEAR(at(1, "h0.nic0.ft>h1.nic0"), 0.5e9, 0.02e9);
  EXPECT_NEAR(at(2, "h0.nic0.ft>h1.nic0"), 4.5e9, 0.02e9);
  EXPECT_DOUBLE_EQ(at(1, "h0.nic0.ft>h1.nic0") + at(2, "h0.nic0.ft>h1.nic0"), 5e9);
  EXPECT_DOUBLE_EQ(at(4, "h0.nic0.ft>h1.nic0"), 1e9);
  // The replayed transfer: 2 GB evenly over [5.5 s, 6.5 s).
  EXPECT_DOUBLE_EQ(at(6, "h2.nic3.ft>h0.nic0"), 1e9);
  EXPECT_DOUBLE_EQ(at(7, "h2.nic3.ft>h0.nic0"), 1e9);
  std::set<long long> seconds;
  for (const auto& [key, value] : seen) {
    EXPECT_EQ(key.second.find("h0.nic0.ft>h0.nic1"), std::string::npos);
    if (value > 0) seconds.insert(key.first);
  }
  EXPECT_EQ(seconds, (std::set<long long>{1, 2, 4, 6, 7}));  // 3, 5, 8 carried nothing
}

JobSpec tp8_pp2_dp4() {
  JobSpec j;
  j.name = "t";
  j.gpus = 64;
  j.parallelism = {8, 2, 4, 1};
  j.compute_per_iteration = 4 * kSecond;
  j.gradient_bytes = 1'000'000'000;
  j.activation_bytes = 64'000'000;
  j.microbatches = 4;
  j.checkpoint_interval = 0;
  return j;
}

// A tp8 pp2 dp4 job for 90 s, steady stretches included: every entry is a
// ring edge or a pipeline direction, each carried exactly what the job
// sent over it, and a second in which no collective ran carried nothing.
TEST(FlowTableSampler, JobTrafficAddsUpAndComputeSecondsAreSilent) {
  const sim::Nanos horizon = 90 * kSecond;
  const JobSpec spec = tp8_pp2_dp4();
  const testing::FlowTableJobRun run = testing::run_flow_table_job(cluster(), spec, horizon);
  const sim::Topology t(cluster());
  const Series series = expand(t, run.batches);
  std::size_t runs = 0;
  for (const auto& b : run.batches) runs += static_cast<std::size_t>(b.flow_table_runs_size());
  EXPECT_GT(runs, 0u) << "no steady stretch: the compact form went untested";

  // Every iteration started before the horizon ran its flows (the last one
  // may end past it and not count).
  const std::uint64_t started = run.iterations_completed + (run.last_end < horizon ? 1 : 0);
  ASSERT_GT(run.iterations_completed, 5u);
  const double ring_bytes = ring_edge_bytes(static_cast<double>(spec.gradient_bytes), 4);
  const double pipeline_bytes = static_cast<double>(spec.activation_bytes) * spec.microbatches;
  std::map<Entry, double> expected;
  for (const auto& e : run.ring_edges_first) expected[e] += static_cast<double>(started) * ring_bytes;
  for (const auto& [a, b] : run.pipeline_pairs_first) {
    expected[{a, b}] += static_cast<double>(started) * pipeline_bytes;
    expected[{b, a}] += static_cast<double>(started) * pipeline_bytes;
  }
  EXPECT_EQ(run.ring_edges_first.size(), 64u);      // 16 rings of 4 hosts, 4 edges each
  EXPECT_EQ(run.pipeline_pairs_first.size(), 32u);  // 4 replicas x 8 rails
  const std::map<Entry, double> seen = totals(series);
  ASSERT_EQ(seen.size(), expected.size());
  for (const auto& [entry, bytes] : expected) {
    ASSERT_TRUE(seen.count(entry)) << entry.first << " -> " << entry.second;
    EXPECT_NEAR(seen.at(entry), bytes, 1.0 * static_cast<double>(started)) << entry.first << " -> " << entry.second;
  }

  // Seconds some collective overlapped, from the job's own records.
  std::set<sim::Nanos> busy;
  auto mark = [&busy](sim::Nanos start, sim::Nanos end) {
    for (sim::Nanos s = start / kSecond + 1; s <= (end - 1) / kSecond + 1; ++s) busy.insert(s);
  };
  for (const auto& b : run.batches) {
    for (const auto& r : b.records())
      if (r.has_collective() && r.collective().end_ns() > 0) mark(r.collective().start_ns(), r.collective().end_ns());
    for (const auto& steady : b.steady())
      for (std::uint64_t i = 0; i <= steady.last_iteration() - steady.first_iteration(); ++i)
        for (const auto& r : steady.records())
          if (r.has_collective())
            mark(r.collective().start_ns() + static_cast<sim::Nanos>(i) * steady.period_ns(),
                 r.collective().end_ns() + static_cast<sim::Nanos>(i) * steady.period_ns());
  }
  int silent = 0;
  for (sim::Nanos s = 1; s <= run.last_end / kSecond; ++s) {
    double bytes = 0;
    if (auto it = series.find(s); it != series.end())
      for (const auto& [entry, b] : it->second) bytes += b;
    if (busy.count(s)) continue;
    EXPECT_EQ(bytes, 0.0) << "second " << s << " had no collective";
    ++silent;
  }
  // About two of every iteration's four compute seconds hold no collective.
  EXPECT_GE(silent, static_cast<int>(run.iterations_completed));
}

// After a restart on a spare, iteration numbers start over from the last
// checkpoint: stretches must repeat the new placement's flows, not the old.
TEST(FlowTableSampler, StretchesAfterARestartRepeatTheNewPlacement) {
  JobSpec spec = tp8_pp2_dp4();
  spec.spare_hosts = 1;
  spec.restart_cost = 20 * kSecond;
  sim::ClusterShape shape = cluster();
  shape.hosts = 9;
  const sim::Nanos isolation = 60 * kSecond + 300 * sim::kMillisecond;
  const auto run =
      testing::run_flow_table_job(shape, spec, 200 * kSecond, [&](sim::FlowEngine& engine, TrainingJob& job) {
        engine.schedule_at(isolation, [&job] { job.isolate({"h2.gpu0"}); });
      });
  ASSERT_EQ(run.hosts_last[2], 8);  // the spare took h2's slot
  int after = 0, on_spare = 0;
  for (const auto& b : run.batches)
    for (const telemetry::FlowTableRun& f : b.flow_table_runs())
      for (const telemetry::FlowBurst& burst : f.bursts()) {
        if (burst.from_ns() < isolation) continue;
        ++after;
        EXPECT_NE(burst.table().rfind("h2.", 0), 0u) << burst.table();
        EXPECT_NE(burst.peer().rfind("h2.", 0), 0u) << burst.peer();
        on_spare += burst.table().rfind("h8.", 0) == 0 ? 1 : 0;
      }
  EXPECT_GT(after, 0);
  EXPECT_GT(on_spare, 0);
}

}  // namespace
}  // namespace gauntlet::models
