#include "models/telemetry/hardware_sampler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>

namespace gauntlet::models {
namespace {

using sim::kSecond;

sim::ClusterShape cluster(int hosts) {
  sim::ClusterShape s;
  s.spines = 1;
  s.leaves = 4;
  s.hosts = hosts;
  s.gpus_per_host = 4;
  s.rnics_per_host = 4;
  return s;
}

SampleInputs all_busy() {
  SampleInputs in;
  in.gpu_busy = [](int, int) { return true; };
  in.link_up = [](sim::EndpointId) { return true; };
  return in;
}

// Every sample the batches stand for, expanded: component -> time -> record.
struct Expanded {
  std::map<std::string, std::map<sim::Nanos, telemetry::Record>> by_component;
  std::uint64_t bytes = 0;

  static std::string name(const telemetry::Record& r) {
    return r.has_gpu() ? r.gpu().gpu() : r.has_cpu() ? r.cpu().cpu() : r.nic().nic();
  }
  void put(const telemetry::Record& r, sim::Nanos at) {
    auto [it, fresh] = by_component[name(r)].emplace(at, r);
    EXPECT_TRUE(fresh) << name(r) << " sampled twice at " << at;
  }
  void add(const telemetry::Batch& batch) {
    bytes += batch.ByteSizeLong();
    for (const auto& r : batch.records())
      put(r, r.has_gpu() ? r.gpu().time_ns() : r.has_cpu() ? r.cpu().time_ns() : r.nic().time_ns());
    for (const auto& block : batch.steady_samples())
      for (sim::Nanos t = block.from_ns(); t <= block.until_ns(); t += block.period_ns())
        for (const auto& r : block.samples()) put(r, t);
  }
  const telemetry::GpuSample& gpu(const std::string& id, sim::Nanos at) { return by_component.at(id).at(at).gpu(); }
};

Expanded run(const sim::Topology& topology, const TelemetryEffects& effects, int seconds,
             const HealthyGpus* healthy = nullptr, SampleInputs inputs = all_busy()) {
  HardwareSampler sampler(topology, effects, {}, healthy);
  Expanded out;
  for (int s = 1; s <= seconds; ++s) {
    telemetry::Batch batch;
    sampler.sample(s * kSecond, inputs, &batch);
    out.add(batch);
  }
  telemetry::Batch last;
  sampler.flush(&last);
  out.add(last);
  return out;
}

TEST(HardwareSampler, ThrottledGpuClocksDownAndHeatsTowardSeventyDegrees) {
  const sim::Topology topology(cluster(2));
  TelemetryEffects effects;
  effects.add_gpu_throttle(0, 1, 10 * kSecond, 1000 * kSecond, 0.2);
  Expanded e = run(topology, effects, 300);
  EXPECT_DOUBLE_EQ(e.gpu("h0.gpu1", 9 * kSecond).clock_mhz(), 1980);
  EXPECT_DOUBLE_EQ(e.gpu("h0.gpu1", 10 * kSecond).clock_mhz(), std::round(1980 * 0.8));
  EXPECT_DOUBLE_EQ(e.gpu("h0.gpu1", 9 * kSecond).temperature_c(), 50);
  // First-order heating with a 30 s time constant toward 70 C.
  const double after_tau = 70 - 20 * std::exp(-30.0 / 30.0);
  EXPECT_NEAR(e.gpu("h0.gpu1", 39 * kSecond).temperature_c(), after_tau, 1.0);
  EXPECT_DOUBLE_EQ(e.gpu("h0.gpu1", 300 * kSecond).temperature_c(), 70);
  for (sim::Nanos t = 11 * kSecond; t <= 300 * kSecond; t += kSecond)
    EXPECT_GE(e.gpu("h0.gpu1", t).temperature_c(), e.gpu("h0.gpu1", t - kSecond).temperature_c());
  // A throttled GPU still runs its kernels: utilization holds, power drops.
  EXPECT_DOUBLE_EQ(e.gpu("h0.gpu1", 100 * kSecond).sm_utilization(), 0.9);
  EXPECT_LT(e.gpu("h0.gpu1", 100 * kSecond).power_w(), e.gpu("h0.gpu0", 100 * kSecond).power_w());
  // Its neighbours are untouched.
  EXPECT_DOUBLE_EQ(e.gpu("h0.gpu0", 100 * kSecond).clock_mhz(), 1980);
  EXPECT_DOUBLE_EQ(e.gpu("h0.gpu0", 100 * kSecond).temperature_c(), 50);
}

TEST(HardwareSampler, ThrottleTakesTheClockDownFromTheGpusOwnHealthyClockAndSetsItsCausesBit) {
  // On a varied fleet a throttled GPU reports 0.8 x its own loaded clock,
  // not 0.8 x 1980 MHz, and NVML's bit of the throttle's cause (HW slowdown
  // 0x8) in place of the power cap's; a power brake does not heat it.
  const sim::Topology topology(cluster(2));
  const HealthyGpus healthy(2, 4, {}, 21);
  TelemetryEffects effects;
  effects.add_gpu_throttle(0, 1, 10 * kSecond, 1000 * kSecond, 0.2, throttle_reason::kHwSlowdown);
  effects.add_gpu_throttle(1, 2, 10 * kSecond, 1000 * kSecond, 0.2, throttle_reason::kHwPowerBrakeSlowdown);
  Expanded e = run(topology, effects, 200, &healthy);
  const double own = healthy.loaded_clock_mhz(1, 0);
  EXPECT_LT(own, 1980);
  EXPECT_DOUBLE_EQ(e.gpu("h0.gpu1", 9 * kSecond).clock_mhz(), own);
  EXPECT_DOUBLE_EQ(e.gpu("h0.gpu1", 20 * kSecond).clock_mhz(), std::round(own * 0.8));
  EXPECT_EQ(e.gpu("h0.gpu1", 9 * kSecond).clock_throttle_reasons(), healthy.throttle_reasons(1, true));
  EXPECT_EQ(e.gpu("h0.gpu1", 20 * kSecond).clock_throttle_reasons(), throttle_reason::kHwSlowdown);
  EXPECT_EQ(e.gpu("h1.gpu2", 20 * kSecond).clock_throttle_reasons(), throttle_reason::kHwPowerBrakeSlowdown);
  EXPECT_DOUBLE_EQ(e.gpu("h1.gpu2", 200 * kSecond).temperature_c(), std::round(healthy.busy_temperature_c(6, 0)));
}

TEST(HardwareSampler, VariedFleetGpusDifferAndIdleOnesClockDownAndCool) {
  const sim::Topology topology(cluster(4));
  const HealthyGpus healthy(4, 4, {}, 5);
  SampleInputs half = all_busy();
  half.gpu_busy = [](int host, int) { return host < 2; };
  Expanded e = run(topology, TelemetryEffects{}, 5, &healthy, half);
  std::set<double> busy_clocks;
  for (int g = 0; g < 4; ++g) busy_clocks.insert(e.gpu("h0.gpu" + std::to_string(g), 5 * kSecond).clock_mhz());
  EXPECT_GT(busy_clocks.size(), 1u);  // no two-valued fleet: clocks spread
  const auto& idle = e.gpu("h3.gpu0", 5 * kSecond);
  EXPECT_EQ(idle.clock_mhz(), 345);
  EXPECT_EQ(idle.clock_throttle_reasons(), throttle_reason::kGpuIdle);
  EXPECT_LT(idle.temperature_c(), e.gpu("h0.gpu0", 5 * kSecond).temperature_c() - 5);
}

TEST(HardwareSampler, XidGaugeHoldsTheLastXid) {
  const sim::Topology topology(cluster(1));
  TelemetryEffects effects;
  effects.add_xid(0, 3, 4 * kSecond, 13);
  effects.add_xid(0, 3, 7 * kSecond, 43);
  Expanded e = run(topology, effects, 10);
  EXPECT_EQ(e.gpu("h0.gpu3", 3 * kSecond).xid(), 0u);
  EXPECT_EQ(e.gpu("h0.gpu3", 4 * kSecond).xid(), 13u);
  EXPECT_EQ(e.gpu("h0.gpu3", 6 * kSecond).xid(), 13u);
  EXPECT_EQ(e.gpu("h0.gpu3", 10 * kSecond).xid(), 43u);
  EXPECT_EQ(e.gpu("h0.gpu2", 10 * kSecond).xid(), 0u);
}

// A healthy fleet logs application XIDs on one GPU at a time: the sample at
// each XID is taken afresh for its host only, every other component's repeat
// block runs on, and every component still has one sample each second.
TEST(HardwareSampler, AnXidResamplesItsHostOnlyAndEverySecondStaysSampledOnce) {
  const int hosts = 8, seconds = 3600;
  const sim::Topology topology(cluster(hosts));
  TelemetryEffects effects;
  std::map<std::pair<int, int>, std::map<sim::Nanos, std::uint32_t>> logged;
  for (int i = 0; i < 20; ++i) {
    const int host = (i * 3) % hosts, gpu = i % 4;
    const sim::Nanos at = (97 + 171 * i) * kSecond;
    effects.add_xid(host, gpu, at, 13 + static_cast<std::uint32_t>(i));
    logged[{host, gpu}][at] = 13 + static_cast<std::uint32_t>(i);
  }
  HardwareSampler sampler(topology, effects);
  Expanded e;
  std::size_t block_samples = 0;
  for (int s = 1; s <= seconds + 1; ++s) {
    telemetry::Batch batch;
    if (s <= seconds)
      sampler.sample(s * kSecond, all_busy(), &batch);
    else
      sampler.flush(&batch);
    for (const auto& block : batch.steady_samples()) block_samples += static_cast<std::size_t>(block.samples_size());
    e.add(batch);
  }
  const std::size_t components = static_cast<std::size_t>(hosts * (4 + 1 + 4));
  ASSERT_EQ(e.by_component.size(), components);
  for (const auto& [id, samples] : e.by_component) ASSERT_EQ(samples.size(), static_cast<std::size_t>(seconds)) << id;
  for (int h = 0; h < hosts; ++h)
    for (int g = 0; g < 4; ++g) {
      const std::string id = "h" + std::to_string(h) + ".gpu" + std::to_string(g);
      std::uint32_t expected = 0;
      const auto log = logged.find({h, g});
      for (int s = 1; s <= seconds; ++s) {
        if (log != logged.end())
          if (auto it = log->second.find(s * kSecond); it != log->second.end()) expected = it->second;
        ASSERT_EQ(e.gpu(id, s * kSecond).xid(), expected) << id << " at " << s << " s";
      }
    }
  // Blocks close at every 10-minute hold for all components, and at an XID
  // for its host's 9 components only (twice that at most: the repeat before
  // and after); closing every component at each XID would add 20 x 72.
  EXPECT_LE(block_samples, 7 * components + 20 * 2 * 9);
}

TEST(HardwareSampler, CpuContentionDropsEveryGpuOfTheHostAtOnceWithClocksUnchanged) {
  const sim::Topology topology(cluster(2));
  TelemetryEffects effects;
  effects.add_cpu_contention(1, 20 * kSecond, 80 * kSecond, 0.216);  // Falcon's single-node case
  Expanded e = run(topology, effects, 120);
  for (int g = 0; g < 4; ++g) {
    const std::string id = "h1.gpu" + std::to_string(g);
    EXPECT_DOUBLE_EQ(e.gpu(id, 19 * kSecond).sm_utilization(), 0.9) << id;
    EXPECT_NEAR(e.gpu(id, 20 * kSecond).sm_utilization(), 0.9 * (1 - 0.216), 0.001) << id;
    EXPECT_DOUBLE_EQ(e.gpu(id, 20 * kSecond).clock_mhz(), 1980) << id;
    EXPECT_DOUBLE_EQ(e.gpu(id, 80 * kSecond).sm_utilization(), 0.9) << id;
    EXPECT_DOUBLE_EQ(e.gpu("h0.gpu" + std::to_string(g), 20 * kSecond).sm_utilization(), 0.9);
  }
  EXPECT_DOUBLE_EQ(e.by_component.at("h1.cpu").at(19 * kSecond).cpu().utilization(), 0.3);
  EXPECT_DOUBLE_EQ(e.by_component.at("h1.cpu").at(20 * kSecond).cpu().utilization(), 1.0);
  EXPECT_DOUBLE_EQ(e.by_component.at("h0.cpu").at(20 * kSecond).cpu().utilization(), 0.3);
}

TEST(HardwareSampler, SteadyHourStandsForEverySampleInTensOfMegabytesAt4096Gpus) {
  const int hosts = 4;
  const sim::Topology topology(cluster(hosts));
  TelemetryEffects effects;
  effects.add_gpu_throttle(2, 3, 600 * kSecond, 900 * kSecond, 0.1);
  Expanded e = run(topology, effects, 3600);
  // Every component has exactly one sample each second, no gaps.
  const std::size_t components = static_cast<std::size_t>(hosts * (4 + 1 + 4));
  ASSERT_EQ(e.by_component.size(), components);
  for (const auto& [id, samples] : e.by_component) {
    ASSERT_EQ(samples.size(), 3600u) << id;
    EXPECT_EQ(samples.begin()->first, kSecond);
    EXPECT_EQ(samples.rbegin()->first, 3600 * kSecond);
  }
  // Extrapolated to 512 hosts x (8 GPUs + CPU + 8 RNICs).
  const double per_component_hour = static_cast<double>(e.bytes) / static_cast<double>(components);
  const double bytes_4096 = per_component_hour * 512 * 17;
  RecordProperty("bytes_per_hour_4096_gpus", std::to_string(bytes_4096));
  EXPECT_LT(bytes_4096, 50e6);
  // Against one record per component per second, far smaller.
  EXPECT_LT(static_cast<double>(e.bytes), 0.05 * 3600.0 * components * 40);
}

// The seed's slow GPU: its peers finish their compute and wait for it in the
// allreduce, idle. Utilization is 0.9 x the share of the step spent computing.
TEST(HardwareSampler, GpusWaitingForASlowerPeerShowLowerUtilization) {
  const sim::Topology topology(cluster(1));
  TelemetryEffects effects;
  HardwareSampler sampler(topology, effects);
  telemetry::Batch batch;
  for (int g = 0; g < 4; ++g) {
    auto* it = batch.add_records()->mutable_iteration();
    it->set_worker("h0.gpu" + std::to_string(g));
    it->set_iteration(3);
    it->set_start_ns(10 * kSecond);
    it->set_end_ns(10 * kSecond + 1'250'000'000);                // a 1.25 s step
    it->set_compute_ns(g == 0 ? 1'250'000'000 : 1'000'000'000);  // GPU0 20% slower
  }
  sampler.observe_traffic(batch, [&] { return [&](int h, int g) { return topology.endpoint(h, g); }; });
  telemetry::Batch out;
  sampler.sample(11 * kSecond, all_busy(), &out);
  std::map<std::string, telemetry::GpuSample> gpus;
  for (const auto& r : out.records())
    if (r.has_gpu()) gpus[r.gpu().gpu()] = r.gpu();
  ASSERT_EQ(gpus.size(), 4u);
  EXPECT_DOUBLE_EQ(gpus["h0.gpu0"].sm_utilization(), 0.9);
  for (int g = 1; g < 4; ++g) {
    const telemetry::GpuSample& s = gpus["h0.gpu" + std::to_string(g)];
    EXPECT_DOUBLE_EQ(s.sm_utilization(), 0.9 * 0.8);
    EXPECT_DOUBLE_EQ(s.power_w(), 100 + 500 * 0.8);  // idle waiting draws less
  }
}

TEST(HardwareSampler, RnicTrafficFollowsTheRnicEachGpuUsesNow) {
  const sim::Topology topology(cluster(2));
  TelemetryEffects effects;
  HardwareSampler sampler(topology, effects);
  // One iteration of 2 s: a 2-rank ring between h0.gpu3 and h1.gpu3 of 1 GB.
  telemetry::Batch batch;
  for (int h = 0; h < 2; ++h) {
    auto* it = batch.add_records()->mutable_iteration();
    it->set_worker("h" + std::to_string(h) + ".gpu3");
    it->set_iteration(7);
    it->set_start_ns(0);
    it->set_end_ns(2 * kSecond);
    auto* c = batch.add_records()->mutable_collective();
    c->set_communicator("dp");
    c->set_rank(static_cast<std::uint32_t>(h));
    c->set_worker("h" + std::to_string(h) + ".gpu3");
    c->set_peer("h" + std::to_string(1 - h) + ".gpu3");
    c->set_op("allreduce");
    c->set_bytes(1'000'000'000);
    c->set_sequence(7);
  }
  // h0.gpu3 falls back to h0.nic0.
  sampler.observe_traffic(batch, [&] {
    return [&](int host, int gpu) {
      return host == 0 && gpu == 3 ? topology.endpoint(0, 0) : topology.endpoint(host, gpu);
    };
  });
  // 2(n-1)/n x 1 GB = 1 GB per iteration of 2 s.
  EXPECT_DOUBLE_EQ(sampler.tx_rate(topology.endpoint(0, 0)), 0.5e9);
  EXPECT_DOUBLE_EQ(sampler.tx_rate(topology.endpoint(0, 3)), 0);
  EXPECT_DOUBLE_EQ(sampler.rx_rate(topology.endpoint(1, 3)), 0.5e9);
  EXPECT_DOUBLE_EQ(sampler.rx_rate(topology.endpoint(0, 0)), 0.5e9);
  telemetry::Batch out;
  SampleInputs in = all_busy();
  in.link_up = [&](sim::EndpointId e) { return e != topology.endpoint(0, 3); };
  sampler.sample(kSecond, in, &out);
  bool seen = false;
  for (const auto& r : out.records())
    if (r.has_nic() && r.nic().nic() == "h0.nic0") {
      EXPECT_EQ(r.nic().tx_bytes(), 500'000'000u);
      EXPECT_EQ(r.nic().tx_packets(), static_cast<std::uint64_t>(std::ceil(500e6 / 4096)));
      seen = true;
    } else if (r.has_nic() && r.nic().nic() == "h0.nic3") {
      EXPECT_FALSE(r.nic().link_up());
      EXPECT_EQ(r.nic().tx_bytes(), 0u);
    }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace gauntlet::models
