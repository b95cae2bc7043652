// gpu_sdc: silent data corruption leaves the GPU's telemetry untouched (no
// XID, no ECC count, full speed) and shows only in the training run, as the
// steps it touches: non-finite gradients or a loss spike in every worker's
// iteration record (Llama 3, section 3.3.4: SDC among the interruptions
// hardest to attribute).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <sstream>

#include "injectors/faults/gpu_class_test_support.hpp"

namespace gauntlet::injectors {
namespace {

using namespace testing;
using sim::kMinute;
using sim::kSecond;

FaultSpec sdc(double nonfinite_share) {
  FaultSpec f = fault("gpu_sdc", "h0.gpu3", 30 * kSecond, 3 * kMinute);
  f.params.set_duration("interval", kMinute);
  f.params.set_number("nonfinite_share", nonfinite_share);
  f.params.set_number("loss_jump", 4);
  return f;
}

TEST(GpuSdc, TheGpusOwnTelemetryShowsNothing) {
  const FaultSpec f = sdc(0.5);
  const models::TelemetryEffects effects = gpu_signature({f}, 5 * kMinute);
  EXPECT_EQ(effects.last_xid(0, 3, 4 * kMinute), 0u);
  EXPECT_FALSE(effects.gpu_errors(0, 3, 0, 5 * kMinute).counts_anything());
  EXPECT_EQ(effects.clock_factor(0, 3, kMinute), 1.0);
  EXPECT_FALSE(effects.gpu_silent(0, 3, kMinute));
}

// Drains the bus every 5 s during the run and keeps what the corrupted
// iteration records said and the crashes it saw: "iterations ranks
// nonfinite spikes jump crashes".
void watch_numerics(models::testing::JobHarness& h) {
  struct Tally {
    std::map<std::uint64_t, int> ranks;  // per marked iteration
    int nonfinite = 0, spikes = 0, crashes = 0;
    double jump = 0;
  };
  auto tally = std::make_shared<Tally>();
  auto step = std::make_shared<std::function<void()>>();
  *step = [&h, tally, step_weak = std::weak_ptr<std::function<void()>>(step)] {
    const telemetry::Batch batch = h.bus.drain(h.engine.now());
    for (const telemetry::Record& r : batch.records()) {
      if (r.has_job() && r.job().kind() == Kind::CRASH) ++tally->crashes;
      if (!r.has_iteration()) continue;
      const auto& it = r.iteration();
      if (!it.nonfinite_gradients() && it.loss_spike() == 0) continue;
      ++tally->ranks[it.iteration()];
      tally->nonfinite += it.nonfinite_gradients() ? 1 : 0;
      tally->spikes += it.loss_spike() > 0 ? 1 : 0;
      if (it.loss_spike() > 0) tally->jump = it.loss_spike();
    }
    if (auto self = step_weak.lock()) h.engine.schedule_at(h.engine.now() + 5 * kSecond, *self);
  };
  h.engine.schedule_at(5 * kSecond, *step);
  h.keep = std::make_shared<std::pair<std::shared_ptr<void>, std::shared_ptr<void>>>(
      std::make_shared<std::pair<std::shared_ptr<void>, std::shared_ptr<void>>>(h.keep, step), tally);
  h.probe = [tally] {
    int ranks = 0;
    for (const auto& [it, n] : tally->ranks) ranks += n;
    std::ostringstream o;
    o << tally->ranks.size() << " " << ranks << " " << tally->nonfinite << " " << tally->spikes << " " << tally->jump
      << " " << tally->crashes;
    return o.str();
  };
}

TEST(GpuSdc, EachTouchedStepShowsInEveryWorkersRecordAndTheJobKeepsItsPace) {
  const models::JobSpec job = gpu_pod_job();
  const JobReport clean = run_gpu_faults(job, 4 * kMinute, {}, watch_numerics);
  EXPECT_EQ(clean.extra, "0 0 0 0 0 0");
  for (double share : {0.0, 1.0}) {
    const JobReport r = run_gpu_faults(job, 4 * kMinute, {sdc(share)}, watch_numerics);
    EXPECT_EQ(r.progress, clean.progress);  // full speed: nothing slows
    // Touched at 30 s, 1:30 and 2:30: three steps, each in all 32 records.
    // No crash: the job runs on, as the framework skips a non-finite step.
    EXPECT_EQ(r.extra, share == 0 ? "3 96 0 96 4 0" : "3 96 96 0 0 0") << share;
  }
}

TEST(GpuSdc, WhichStepsGoNonFiniteRepeatsRunToRun) {
  const models::JobSpec job = gpu_pod_job();
  const JobReport a = run_gpu_faults(job, 4 * kMinute, {sdc(0.5)}, watch_numerics);
  const JobReport b = run_gpu_faults(job, 4 * kMinute, {sdc(0.5)}, watch_numerics);
  EXPECT_EQ(a.extra, b.extra);
  EXPECT_EQ(a.extra.substr(0, 5), "3 96 ");
}

}  // namespace
}  // namespace gauntlet::injectors
