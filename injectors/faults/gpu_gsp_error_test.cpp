// gpu_gsp_error against NVIDIA's XID catalog (XID 119: GSP RPC timeout) and
// against what a hung GSP does: the GPU stops answering, so its DCGM series
// go stale rather than reporting values, and the job hangs until its
// watchdog fires.
#include <gtest/gtest.h>

#include <map>

#include "injectors/faults/gpu_class_test_support.hpp"
#include "models/telemetry/hardware_sampler.hpp"

namespace gauntlet::injectors {
namespace {

using namespace testing;
using sim::kMinute;
using sim::kSecond;

FaultSpec gsp(sim::Nanos at, sim::Nanos duration) {
  FaultSpec f = fault("gpu_gsp_error", "h3.gpu1", at, duration);
  f.params.set_duration("stale_after", kSecond);
  return f;
}

// The times at which each GPU published a sample over `seconds` 1 s samples
// (steady repeats expanded), and the XID of the last one.
struct Seen {
  std::map<std::string, std::vector<sim::Nanos>> times;
  std::map<std::string, std::map<sim::Nanos, std::uint32_t>> xid;
};

Seen sampled(const models::TelemetryEffects& effects, int seconds) {
  const sim::Topology topology(gpu_pod());
  models::HardwareSampler sampler(topology, effects);
  models::SampleInputs in;
  in.gpu_busy = [](int, int) { return true; };
  in.link_up = [](sim::EndpointId) { return true; };
  Seen seen;
  const auto take = [&seen](const telemetry::Batch& b) {
    for (const auto& r : b.records())
      if (r.has_gpu()) seen.xid[r.gpu().gpu()][r.gpu().time_ns()] = r.gpu().xid();
    for (const auto& block : b.steady_samples())
      for (sim::Nanos t = block.from_ns(); t <= block.until_ns(); t += block.period_ns())
        for (const auto& r : block.samples())
          if (r.has_gpu()) seen.xid[r.gpu().gpu()][t] = r.gpu().xid();
  };
  for (int s = 1; s <= seconds; ++s) {
    telemetry::Batch batch;
    sampler.sample(s * kSecond, in, &batch);
    take(batch);
  }
  telemetry::Batch last;
  sampler.flush(&last);
  take(last);
  for (const auto& [gpu, by_time] : seen.xid)
    for (const auto& [t, x] : by_time) seen.times[gpu].push_back(t);
  return seen;
}

TEST(GpuGspError, LogsXid119AndTheGpusSeriesGoStaleUntilTheFaultEnds) {
  const FaultSpec f = gsp(10 * kSecond, 30 * kSecond);
  const Seen seen = sampled(gpu_signature({f}, kMinute), 60);
  const auto& times = seen.times.at("h3.gpu1");
  // Samples at 1..10 s (the one at 10 s carries the XID), none at 11..39 s,
  // then every second again from the fault's end.
  EXPECT_EQ(times.size(), 10u + 21u);
  EXPECT_EQ(seen.xid.at("h3.gpu1").at(10 * kSecond), 119u);
  EXPECT_EQ(seen.xid.at("h3.gpu1").at(9 * kSecond), 0u);
  for (sim::Nanos t : times) EXPECT_TRUE(t <= 10 * kSecond || t >= 40 * kSecond) << t;
  EXPECT_EQ(seen.xid.at("h3.gpu1").at(40 * kSecond), 119u);  // the gauge holds the last XID
  EXPECT_EQ(seen.times.at("h3.gpu0").size(), 60u);           // its neighbours answer throughout
  const models::TelemetryEffects effects = gpu_signature({f}, kMinute);
  EXPECT_FALSE(effects.gpu_errors(3, 1, 0, kMinute).counts_anything());  // no ECC count: not a memory error
}

TEST(GpuGspError, TheJobHangsUntilItsWatchdogThenWaitsForTheGpu) {
  const models::JobSpec job = gpu_pod_job();
  const FaultSpec f = gsp(30 * kSecond, 4 * kMinute);
  const JobReport r = run_gpu_faults(job, 7 * kMinute, {f});
  ASSERT_EQ(r.count(Kind::CRASH), 1);
  EXPECT_EQ(r.first(Kind::CRASH)->time, f.start + job.collective_timeout);  // a hang, not a crash
  EXPECT_EQ(r.first(Kind::CRASH)->error, "NCCL Error");
  EXPECT_EQ(r.unfinished.size(), 8u * 4u - 1u);  // every rank but the hung GPU's waits in the collective
  EXPECT_EQ(r.first(Kind::RESTART)->time, *f.end() + job.restart_cost);
}

}  // namespace
}  // namespace gauntlet::injectors
