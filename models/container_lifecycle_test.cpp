// Containers through the job's lifecycle: a failed GPU's container is
// replaced on a spare when the job restarts, the others restart in place,
// and every completed iteration ran inside live containers.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "models/job_test_support.hpp"

namespace gauntlet::models {
namespace {

using testing::JobHarness;
using testing::JobReport;
using testing::run_job;
using Kind = telemetry::JobEvent;

// Two pods of 8 hosts; the job takes pod 0, its spares are h8 and h9.
sim::ClusterShape cluster() { return testing::rail_pods(2, 8); }

JobSpec job() {
  JobSpec j = testing::tp8_pp2_dp4_job();
  j.name = "llm";
  j.spare_hosts = 2;
  return j;
}

struct Lifetime {
  std::string id;
  int slot = 0, host = 0;
  sim::Nanos start = 0, stop = -1;  // -1: still running
  std::string reason;
  std::vector<int> rnics;
  std::vector<int> gpus;

  bool live_at(sim::Nanos t) const { return start <= t && (stop < 0 || t < stop); }
};

// The job's container lifetimes as one line of text (the run is forked).
std::string lifetimes_text(const TrainingJob& job) {
  std::ostringstream out;
  for (const Container& c : job.containers().lifetimes()) {
    out << c.id << ' ' << c.slot << ' ' << c.host << ' ' << c.started_at << ' ' << (c.stopped_at ? *c.stopped_at : -1)
        << ' ' << (c.stop_reason ? stop_reason_name(*c.stop_reason) : "-") << ' ' << c.vfs.size();
    for (const VirtualFunction& vf : c.vfs) out << ' ' << vf.rnic;
    out << ' ' << c.gpus.size();
    for (int g : c.gpus) out << ' ' << g;
    out << ' ';
  }
  return out.str();
}

std::vector<Lifetime> parse(const std::string& text) {
  std::vector<Lifetime> out;
  std::istringstream in(text);
  Lifetime l;
  while (in >> l.id >> l.slot >> l.host >> l.start >> l.stop >> l.reason) {
    std::size_t n = 0;
    in >> n;
    l.rnics.assign(n, 0);
    for (int& e : l.rnics) in >> e;
    in >> n;
    l.gpus.assign(n, 0);
    for (int& g : l.gpus) in >> g;
    out.push_back(l);
  }
  return out;
}

constexpr sim::Nanos kFail = 12 * sim::kMinute + 13 * sim::kSecond;
constexpr sim::Nanos kHorizon = 30 * sim::kMinute;

JobReport run_with_failed_gpu() {
  return run_job(cluster(), job(), kHorizon, true, [](JobHarness& h) {
    TrainingJob* job = &h.job;
    h.engine.schedule_at(kFail, [job] { job->fail_gpu(3, 2); });  // never repaired
    h.job.set_change_horizon(
        [&engine = h.engine] { return engine.now() < kFail ? kFail : std::numeric_limits<sim::Nanos>::max(); });
    h.probe = [job] { return lifetimes_text(*job); };
  });
}

std::set<int> live_endpoints(const std::vector<Lifetime>& all, sim::Nanos t) {
  std::set<int> out;
  for (const Lifetime& l : all)
    if (l.live_at(t)) out.insert(l.rnics.begin(), l.rnics.end());
  return out;
}

TEST(ContainerLifecycle, AFailedGpusContainerMovesToASpareAtRestartWhileTheOthersRestartInPlace) {
  const JobReport r = run_with_failed_gpu();
  const std::vector<Lifetime> all = parse(r.extra);
  const auto* crash = r.first(Kind::CRASH);
  const auto* restart = r.first(Kind::RESTART);
  ASSERT_NE(crash, nullptr);
  ASSERT_NE(restart, nullptr);
  const JobSpec spec = job();
  ASSERT_EQ(crash->time, kFail + spec.collective_timeout);
  ASSERT_EQ(all.size(), 16u);  // 8 slots, two incarnations each

  std::map<std::string, Lifetime> by_id;
  for (const Lifetime& l : all) by_id[l.id] = l;
  const Lifetime& failed = by_id.at("llm/c3.0");
  EXPECT_EQ(failed.host, 3);
  EXPECT_EQ(failed.stop, crash->time);  // torn down when the watchdog crashes the job
  EXPECT_EQ(failed.reason, "gpu_failed");
  const Lifetime& moved = by_id.at("llm/c3.1");
  EXPECT_EQ(moved.host, 8);  // the first spare
  EXPECT_EQ(moved.start, crash->time + spec.restart_cost);
  EXPECT_EQ(moved.stop, -1);
  for (int slot = 0; slot < 8; ++slot) {
    if (slot == 3) continue;
    const Lifetime& before = by_id.at("llm/c" + std::to_string(slot) + ".0");
    const Lifetime& after = by_id.at("llm/c" + std::to_string(slot) + ".1");
    EXPECT_EQ(before.reason, "restart");
    EXPECT_EQ(after.host, before.host);  // restarted in place
    EXPECT_EQ(after.start, restart->time);
  }

  // The talking endpoints change by exactly the swapped hosts' RNICs.
  const sim::Topology topology(cluster());
  const std::set<int> before = live_endpoints(all, crash->time - 1);
  const std::set<int> after = live_endpoints(all, restart->time);
  std::set<int> gone, came;
  std::set_difference(before.begin(), before.end(), after.begin(), after.end(), std::inserter(gone, gone.end()));
  std::set_difference(after.begin(), after.end(), before.begin(), before.end(), std::inserter(came, came.end()));
  std::set<int> h3, h8;
  for (int k = 0; k < 8; ++k) {
    h3.insert(topology.endpoint(3, k));
    h8.insert(topology.endpoint(8, k));
  }
  EXPECT_EQ(gone, h3);
  EXPECT_EQ(came, h8);
}

TEST(ContainerLifecycle, LifetimesCoverTheRunExceptTheRestartWindowAndNeverShareAGpu) {
  const JobReport r = run_with_failed_gpu();
  const std::vector<Lifetime> all = parse(r.extra);
  const auto* crash = r.first(Kind::CRASH);
  const auto* restart = r.first(Kind::RESTART);
  ASSERT_NE(crash, nullptr);
  ASSERT_NE(restart, nullptr);
  // Every slot has a live container at every instant outside the restart
  // window and none inside it; checked at every lifetime edge and between.
  std::set<sim::Nanos> instants = {0, kHorizon - 1, crash->time - 1, crash->time, restart->time - 1, restart->time};
  for (const Lifetime& l : all) {
    instants.insert(l.start);
    if (l.stop >= 0) instants.insert(l.stop);
  }
  for (sim::Nanos t = 0; t < kHorizon; t += 7 * sim::kSecond) instants.insert(t);
  for (sim::Nanos t : instants) {
    std::map<int, int> per_slot;
    std::set<std::pair<int, int>> gpus;
    for (const Lifetime& l : all) {
      if (!l.live_at(t)) continue;
      ++per_slot[l.slot];
      for (int g : l.gpus) EXPECT_TRUE(gpus.insert({l.host, g}).second) << "h" << l.host << ".gpu" << g << " at " << t;
    }
    const bool restarting = t >= crash->time && t < restart->time;
    EXPECT_EQ(per_slot.size(), restarting ? 0u : 8u) << "at " << t;
    for (const auto& [slot, n] : per_slot) EXPECT_EQ(n, 1) << "slot " << slot << " at " << t;
  }
  // Work only happens inside containers: each counted iteration ran while
  // every slot had a live container.
  ASSERT_FALSE(r.timeline.empty());
  for (const IterationSpan& s : r.timeline) {
    const sim::Nanos end = s.start + static_cast<sim::Nanos>(s.count) * s.duration;
    EXPECT_TRUE(s.start >= restart->time || end <= crash->time) << s.first;
  }
}

TEST(ContainerLifecycle, AReconfigurationStopsEveryContainerAndShiftsThemByOneHost) {
  const sim::Nanos at = 7 * sim::kMinute;
  const JobReport r = run_job(cluster(), job(), 15 * sim::kMinute, true, [at](JobHarness& h) {
    TrainingJob* job = &h.job;
    h.engine.schedule_at(at, [job] { job->reconfigure(); });
    h.job.set_change_horizon(
        [&engine = h.engine, at] { return engine.now() < at ? at : std::numeric_limits<sim::Nanos>::max(); });
    h.probe = [job] { return lifetimes_text(*job); };
  });
  const std::vector<Lifetime> all = parse(r.extra);
  const auto* restart = r.first(Kind::RESTART);
  ASSERT_NE(restart, nullptr);
  ASSERT_EQ(all.size(), 16u);
  for (const Lifetime& l : all) {
    if (l.id.ends_with(".0")) {
      EXPECT_EQ(l.reason, "reconfigure");
      EXPECT_EQ(l.stop, restart->time - job().restart_cost);  // right after the checkpoint
      EXPECT_GE(l.stop, at);
    } else {
      EXPECT_EQ(l.start, restart->time);
      EXPECT_EQ(l.host, l.slot + 1);  // the pool h0..h9 shifted by one
    }
  }
}

TEST(ContainerLifecycle, AnIsolatedHostsContainerStopsAtOnceAndARefusedIsolationRestartsInPlace) {
  // Two spares: h2 is isolated (spare h8 takes its slot); later h5 and h6
  // are, with one spare left: h5 goes to h9, h6 must stay and restarts in place.
  const sim::Nanos first = 10 * sim::kMinute + 7 * sim::kSecond, second = first + 10 * sim::kMinute;
  const JobReport r = run_job(cluster(), job(), 30 * sim::kMinute, true, [&](JobHarness& h) {
    TrainingJob* job = &h.job;
    h.engine.schedule_at(first, [job] { job->isolate({"h2.nic1"}); });
    h.engine.schedule_at(second, [job] { job->isolate({"h5", "h6.gpu0"}); });
    h.probe = [job] { return lifetimes_text(*job); };
  });
  std::map<std::string, Lifetime> by_id;
  for (const Lifetime& l : parse(r.extra)) by_id[l.id] = l;
  ASSERT_EQ(by_id.size(), 24u);  // three incarnations of 8 slots
  EXPECT_EQ(by_id.at("llm/c2.0").stop, first);
  EXPECT_EQ(by_id.at("llm/c2.0").reason, "isolated");
  EXPECT_EQ(by_id.at("llm/c0.0").reason, "restart");
  EXPECT_EQ(by_id.at("llm/c2.1").host, 8);
  EXPECT_EQ(by_id.at("llm/c2.1").start, first + job().restart_cost);
  EXPECT_EQ(by_id.at("llm/c5.1").reason, "isolated");
  EXPECT_EQ(by_id.at("llm/c6.1").reason, "restart");  // no spare for it: not taken out
  EXPECT_EQ(by_id.at("llm/c5.2").host, 9);
  EXPECT_EQ(by_id.at("llm/c6.2").host, 6);
  EXPECT_EQ(by_id.at("llm/c6.2").start, second + job().restart_cost);
}

}  // namespace
}  // namespace gauntlet::models
