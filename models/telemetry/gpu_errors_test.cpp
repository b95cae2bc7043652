// A GPU fault's signature in the DCGM error fields the hardware sampler
// fills: the ECC and row remap counts of its XID (NVIDIA's XID catalog: 48
// is a double-bit ECC error, which an H100 answers by remapping the row; 79
// a GPU fallen off the bus, which counts nothing).
#include "models/telemetry/gpu_errors.hpp"

#include <gtest/gtest.h>

#include <map>

#include "models/telemetry/hardware_sampler.hpp"

namespace gauntlet::models {
namespace {

using sim::kSecond;

sim::ClusterShape cluster() {
  sim::ClusterShape s;
  s.spines = 1;
  s.leaves = 2;
  s.hosts = 2;
  s.gpus_per_host = 2;
  s.rnics_per_host = 2;
  return s;
}

// Every GPU sample of `seconds` one-second samples, repeats expanded.
std::map<std::string, std::map<sim::Nanos, telemetry::GpuSample>> gpu_samples(const TelemetryEffects& effects,
                                                                              int seconds, bool busy = true) {
  const sim::Topology topology(cluster());
  HardwareSampler sampler(topology, effects);
  SampleInputs in;
  in.gpu_busy = [busy](int, int) { return busy; };
  in.link_up = [](sim::EndpointId) { return true; };
  std::map<std::string, std::map<sim::Nanos, telemetry::GpuSample>> out;
  const auto take = [&out](const telemetry::Batch& b) {
    for (const auto& r : b.records())
      if (r.has_gpu()) out[r.gpu().gpu()][r.gpu().time_ns()] = r.gpu();
    for (const auto& block : b.steady_samples())
      for (sim::Nanos t = block.from_ns(); t <= block.until_ns(); t += block.period_ns())
        for (const auto& r : block.samples())
          if (r.has_gpu()) out[r.gpu().gpu()][t] = r.gpu();
  };
  for (int s = 1; s <= seconds; ++s) {
    telemetry::Batch batch;
    sampler.sample(s * kSecond, in, &batch);
    take(batch);
  }
  telemetry::Batch last;
  sampler.flush(&last);
  take(last);
  return out;
}

TEST(GpuErrors, DoubleBitEccCountsOnceInTheSampleCoveringIt) {
  TelemetryEffects effects;
  effects.add_gpu_error(1, 0, GpuErrorEvent::for_failure(10 * kSecond + 300'000'000, xid::kDoubleBitEcc));
  auto samples = gpu_samples(effects, 60);
  const auto& gpu = samples.at("h1.gpu0");
  ASSERT_EQ(gpu.size(), 60u);
  std::uint32_t dbe = 0, remapped = 0;
  for (const auto& [t, s] : gpu) {
    dbe += s.ecc_dbe();
    remapped += s.remapped_rows_uncorrectable();
  }
  EXPECT_EQ(dbe, 1u);  // one error, counted in one sample only
  EXPECT_EQ(remapped, 1u);
  EXPECT_EQ(gpu.at(11 * kSecond).ecc_dbe(), 1u);
  EXPECT_EQ(gpu.at(12 * kSecond).ecc_dbe(), 0u);
  for (const auto& [t, s] : samples.at("h0.gpu1")) EXPECT_EQ(s.ecc_dbe(), 0u);  // its peers are untouched
}

TEST(GpuErrors, FallenOffTheBusRaisesOnlyItsXid) {
  const GpuErrorEvent e = GpuErrorEvent::for_failure(0, xid::kFallenOffTheBus);
  EXPECT_EQ(e.xid, 79u);
  EXPECT_FALSE(e.counts_anything());
  EXPECT_TRUE(xid::is_gpu_failure(79));
  EXPECT_FALSE(xid::is_gpu_failure(13));  // an application's error leaves the GPU healthy
}

TEST(GpuErrors, FramebufferHeldOnlyWhileTheJobRuns) {
  auto busy = gpu_samples(TelemetryEffects{}, 3);
  auto idle = gpu_samples(TelemetryEffects{}, 3, false);
  EXPECT_EQ(idle.at("h0.gpu0").at(2 * kSecond).fb_used_mib(), 0);
  EXPECT_GT(busy.at("h0.gpu0").at(2 * kSecond).fb_used_mib(), 0);
  EXPECT_EQ(busy.at("h0.gpu0").at(2 * kSecond).fb_free_mib() + busy.at("h0.gpu0").at(2 * kSecond).fb_used_mib(),
            81559);  // an H100 80GB's framebuffer as nvidia-smi reports it
  EXPECT_EQ(busy.at("h0.gpu0").at(2 * kSecond).mem_clock_mhz(), 2619);
}

}  // namespace
}  // namespace gauntlet::models
