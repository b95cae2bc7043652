// gpu_sram_error against NVIDIA's XID catalog (XID 94: contained ECC error,
// restart the application; 95: uncontained, reset the GPU): one double-bit
// error and no row remap, and a job that restarts on the same GPU (94) or
// waits for the GPU's reset (95).
#include <gtest/gtest.h>

#include "injectors/faults/builtin_faults.hpp"
#include "injectors/faults/gpu_class_test_support.hpp"

namespace gauntlet::injectors {
namespace {

using namespace testing;
using sim::kMinute;
using sim::kSecond;

FaultSpec sram(const std::string& containment) {
  FaultSpec f = fault("gpu_sram_error", "h1.gpu2", 40 * kSecond, 5 * kMinute);
  f.params.set_text("containment", containment);
  f.params.set_duration("reset", 90 * kSecond);
  return f;
}

TEST(GpuSramError, CountsOneDoubleBitErrorAndNoRowRemap) {
  for (const std::string containment : {"contained", "uncontained"}) {
    const FaultSpec f = sram(containment);
    const models::TelemetryEffects effects = gpu_signature({f}, 10 * kMinute);
    const models::GpuErrorEvent all = effects.gpu_errors(1, 2, 0, 10 * kMinute);
    EXPECT_EQ(all.ecc_dbe, 1u) << containment;
    EXPECT_EQ(all.ecc_sbe, 0u);
    EXPECT_EQ(all.remapped_rows_uncorrectable + all.remapped_rows_correctable, 0u);  // SRAM has no rows to remap
    EXPECT_FALSE(all.row_remap_failure);
    EXPECT_EQ(effects.last_xid(1, 2, f.start - 1), 0u);
    EXPECT_EQ(effects.last_xid(1, 2, f.start), containment == "contained" ? 94u : 95u);
  }
}

TEST(GpuSramError, AContainedErrorRestartsTheJobOnTheSameGpu) {
  const models::JobSpec job = gpu_pod_job();
  const FaultSpec f = sram("contained");
  const JobReport r = run_gpu_faults(job, 6 * kMinute, {f});
  ASSERT_EQ(r.count(Kind::CRASH), 1);
  EXPECT_EQ(r.first(Kind::CRASH)->time, f.start);
  EXPECT_EQ(r.first(Kind::CRASH)->error, faults::kUncorrectableEccError);
  EXPECT_EQ(r.first(Kind::RESTART)->time, f.start + job.restart_cost);  // the GPU stayed healthy
  EXPECT_EQ(r.hosts, (std::vector<int>{0, 1, 2, 3}));
}

TEST(GpuSramError, AnUncontainedErrorWaitsForTheGpusReset) {
  const models::JobSpec job = gpu_pod_job();
  const FaultSpec f = sram("uncontained");
  const JobReport r = run_gpu_faults(job, 6 * kMinute, {f});
  ASSERT_EQ(r.count(Kind::CRASH), 1);
  EXPECT_EQ(r.first(Kind::CRASH)->time, f.start);
  EXPECT_EQ(r.first(Kind::RESTART)->time, f.start + 90 * kSecond + job.restart_cost);
}

TEST(GpuSramError, AGpuTheJobDoesNotUseLeavesItRunning) {
  models::JobSpec job = gpu_pod_job();
  job.spare_hosts = 1;  // h4 idles
  FaultSpec f = sram("uncontained");
  f.target = "h4.gpu0";
  const JobReport r = run_gpu_faults(job, 6 * kMinute, {f});
  EXPECT_EQ(r.count(Kind::CRASH), 0);
}

}  // namespace
}  // namespace gauntlet::injectors
