// gpu_hbm_error against NVIDIA's XID catalog (XID 48: double-bit ECC error;
// 63: a row remap recorded; 64: a row remap failed) and against what the
// failure does to a job: the processes die at once with the ECC error, the
// GPU returns after its reset when the remap succeeded and stays out (as a
// gpu_fail) when it failed.
#include <gtest/gtest.h>

#include "injectors/faults/builtin_faults.hpp"
#include "injectors/faults/gpu_class_test_support.hpp"
#include "models/telemetry/gpu_failure_calibration.hpp"

namespace gauntlet::injectors {
namespace {

using namespace testing;
using sim::kMinute;
using sim::kSecond;

FaultSpec hbm(const std::string& remap, sim::Nanos at = 30 * kSecond, sim::Nanos duration = 5 * kMinute) {
  FaultSpec f = fault("gpu_hbm_error", "h2.gpu6", at, duration);
  f.params.set_text("remap", remap);
  f.params.set_duration("sbe_lead", 30 * kSecond);
  f.params.set_number("sbe_count", 6);
  f.params.set_duration("reset", 2 * kMinute);
  return f;
}

TEST(GpuHbmError, SingleBitErrorsComeFirstThenTheDoubleBitErrorAndTheRemapsXid) {
  const FaultSpec f = hbm("succeeds");
  const sim::Nanos dbe = f.start + 30 * kSecond;
  const models::TelemetryEffects effects = gpu_signature({f}, 10 * kMinute);
  const models::GpuErrorEvent before = effects.gpu_errors(2, 6, 0, dbe - 1);
  EXPECT_EQ(before.ecc_sbe, 6u);  // every corrected error before the uncorrectable one
  EXPECT_EQ(before.ecc_dbe, 0u);
  EXPECT_EQ(effects.last_xid(2, 6, dbe - 1), 0u);  // corrected errors log no XID
  const models::GpuErrorEvent at = effects.gpu_errors(2, 6, dbe - 1, dbe);
  EXPECT_EQ(at.ecc_dbe, 1u);
  EXPECT_EQ(at.remapped_rows_uncorrectable, 1u);
  EXPECT_FALSE(at.row_remap_failure);
  // XID 48 then 63 at once: dcgm-exporter's gauge shows the last, 63.
  EXPECT_EQ(effects.last_xid(2, 6, dbe), models::xid::kRowRemapRecorded);
  EXPECT_EQ(effects.last_xid(2, 6, 9 * kMinute), 63u);
  EXPECT_EQ(effects.gpu_errors(2, 6, dbe, 10 * kMinute).ecc_sbe, 0u);  // the row is replaced
  EXPECT_EQ(effects.last_xid(2, 5, 9 * kMinute), 0u);                  // its neighbours are untouched
}

TEST(GpuHbmError, AFailedRemapRaisesXid64AndFlagsTheGpu) {
  const FaultSpec f = hbm("fails");
  const sim::Nanos dbe = f.start + 30 * kSecond;
  const models::TelemetryEffects effects = gpu_signature({f}, 10 * kMinute);
  const models::GpuErrorEvent at = effects.gpu_errors(2, 6, dbe - 1, dbe);
  EXPECT_EQ(at.ecc_dbe, 1u);
  EXPECT_EQ(at.remapped_rows_uncorrectable, 0u);
  EXPECT_EQ(effects.last_xid(2, 6, dbe), models::xid::kRowRemapFailure);
  EXPECT_FALSE(effects.gpu_errors(2, 6, 0, dbe - 1).row_remap_failure);
  EXPECT_TRUE(effects.gpu_errors(2, 6, 8 * kMinute, 9 * kMinute).row_remap_failure);  // it holds
}

TEST(GpuHbmError, TheJobCrashesAtTheDoubleBitErrorAndWaitsForTheReset) {
  const models::JobSpec job = gpu_pod_job();
  const FaultSpec f = hbm("succeeds");
  const sim::Nanos dbe = f.start + 30 * kSecond;
  const JobReport r = run_gpu_faults(job, 8 * kMinute, {f});
  ASSERT_EQ(r.count(Kind::CRASH), 1);
  EXPECT_EQ(r.first(Kind::CRASH)->time, dbe);  // at once: no hang until the watchdog
  EXPECT_EQ(r.first(Kind::CRASH)->error, faults::kUncorrectableEccError);
  EXPECT_TRUE(r.unfinished.empty());                                              // nothing hung
  EXPECT_EQ(r.first(Kind::RESTART)->time, dbe + 2 * kMinute + job.restart_cost);  // reset, then restart
}

TEST(GpuHbmError, WithASpareTheJobRestartsWithoutWaitingForTheReset) {
  models::JobSpec job = gpu_pod_job();
  job.spare_hosts = 1;
  const FaultSpec f = hbm("succeeds");
  const JobReport r = run_gpu_faults(job, 8 * kMinute, {f});
  EXPECT_EQ(r.first(Kind::RESTART)->time, f.start + 30 * kSecond + job.restart_cost);
  EXPECT_EQ(r.hosts, (std::vector<int>{0, 1, 4, 3}));
}

TEST(GpuHbmError, AFailedRemapKeepsTheGpuOutUntilTheFaultEnds) {
  const models::JobSpec job = gpu_pod_job();
  const FaultSpec f = hbm("fails");
  const JobReport r = run_gpu_faults(job, 8 * kMinute, {f});
  ASSERT_EQ(r.count(Kind::CRASH), 1);
  EXPECT_EQ(r.first(Kind::CRASH)->time, f.start + 30 * kSecond);
  EXPECT_EQ(r.first(Kind::RESTART)->time, *f.end() + job.restart_cost);  // drained, as a gpu_fail
}

TEST(GpuHbmError, TheDoubleBitErrorMustComeWithinTheFault) {
  const FaultTypeInfo& type = builtin_fault_catalog().spec("gpu_hbm_error");
  EXPECT_FALSE(type.check(hbm("succeeds")));
  const auto problem = type.check(hbm("succeeds", 30 * kSecond, 20 * kSecond));
  ASSERT_TRUE(problem);
  EXPECT_EQ(problem->param, "sbe_lead");
  FaultSpec fractional = hbm("succeeds");
  fractional.params.set_number("sbe_count", 2.5);
  EXPECT_EQ(type.check(fractional)->param, "sbe_count");
}

TEST(GpuHbmError, LeftOutTheLeadIsTheRunsCalibration) {
  FaultSpec f = fault("gpu_hbm_error", "h2.gpu6", 30 * kSecond, 5 * kMinute);
  sim::Calibration calibration;
  const std::vector<FaultSpec> defaults = with_calibrated_defaults({f}, builtin_fault_catalog(), calibration);
  EXPECT_FALSE(defaults[0].params.has("sbe_lead"));  // the attribute's default, read by the type
  const sim::Nanos dbe_default = f.start + models::calibration::kHbmSbeLead.default_duration();
  EXPECT_EQ(gpu_signature(defaults, 10 * kMinute).last_xid(2, 6, dbe_default), 63u);
  calibration.set(models::calibration::kHbmSbeLead, static_cast<double>(10 * kSecond));
  const std::vector<FaultSpec> set = with_calibrated_defaults({f}, builtin_fault_catalog(), calibration);
  EXPECT_EQ(set[0].params.duration("sbe_lead"), 10 * kSecond);
  EXPECT_EQ(gpu_signature(set, 10 * kMinute).last_xid(2, 6, f.start + 10 * kSecond), 63u);
  f.params.set_duration("sbe_lead", 20 * kSecond);  // a fault's own value wins
  EXPECT_EQ(with_calibrated_defaults({f}, builtin_fault_catalog(), calibration)[0].params.duration("sbe_lead"),
            20 * kSecond);
}

}  // namespace
}  // namespace gauntlet::injectors
