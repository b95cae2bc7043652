#pragma once
// Calibration of the GPU failure classes of Llama 3's Table 5 that differ in
// their signals (injectors/faults/gpu_hbm_error.cpp, gpu_sram_error.cpp,
// gpu_gsp_error.cpp, gpu_sdc.cpp): how a failing HBM row announces itself,
// how long a GPU reset keeps a GPU out, when a hung GSP's GPU stops
// answering DCGM, and how often silent corruption touches a step. Each is
// the default of its fault type's parameter of the same meaning (a fault
// may set its own); a scenario's `calibration:` block sets the default for
// the run. No operator publishes these per-event figures: each says so.
#include "models/calibration.hpp"

namespace gauntlet::models::calibration {

inline constexpr Attribute kHbmSbeCount{
    "gpu_failure.hbm_sbe_count",
    AttributeUnit::count,
    8,
    0,
    100000,
    "single-bit (corrected) ECC errors a failing HBM row reports, evenly spread, before its double-bit error",
    "no published source: NVIDIA's XID 92 (high single-bit ECC rate) says corrected errors can precede an "
    "uncorrectable one, not how many"};
inline constexpr Attribute kHbmSbeLead{
    "gpu_failure.hbm_sbe_lead",
    AttributeUnit::duration,
    2 * kMin,
    1 * kMs,
    30 * 24 * kHour,
    "time from a failing HBM row's first single-bit error (the fault's start) to its double-bit error (XID 48)",
    "no published source"};
inline constexpr Attribute kGpuResetTime{
    "gpu_failure.reset_time",
    AttributeUnit::duration,
    2 * kMin,
    1 * kS,
    24 * kHour,
    "how long a GPU is out while it is drained and reset (a remapped row takes effect, XID 95 clears)",
    "no published source: NVIDIA's XID catalog asks for a GPU reset (nvidia-smi -r) after XID 63 and 95 but "
    "gives no duration"};
inline constexpr Attribute kGspStaleAfter{
    "gpu_failure.gsp_stale_after",
    AttributeUnit::duration,
    1 * kS,
    0,
    1 * kHour,
    "after the GSP stops answering (XID 119), how long DCGM still reports the GPU: its last sample carries the XID",
    "no published source"};
inline constexpr Attribute kSdcInterval{
    "gpu_failure.sdc_interval",
    AttributeUnit::duration,
    5 * kMin,
    1 * kS,
    30 * 24 * kHour,
    "time between the training steps silent data corruption touches (the first at the fault's start)",
    "no published source: Llama 3 (Table 5) counts 6 interruptions from SDC in 54 days, not how often a "
    "corrupting GPU corrupts a step"};
inline constexpr Attribute kSdcNonfiniteShare{
    "gpu_failure.sdc_nonfinite_share",
    AttributeUnit::ratio,
    0.5,
    0,
    1,
    "share of corrupted steps whose gradients turn non-finite (NaN/Inf); the others show a finite loss spike",
    "no published source"};
inline constexpr Attribute kSdcLossJump{"gpu_failure.sdc_loss_jump",
                                        AttributeUnit::ratio,
                                        3,
                                        1,
                                        1e6,
                                        "a finite corrupted step's training loss over the mean of the steps before it",
                                        "no published source"};

inline constexpr const Attribute* kGpuFailureAll[] = {
    &kHbmSbeCount, &kHbmSbeLead, &kGpuResetTime, &kGspStaleAfter, &kSdcInterval, &kSdcNonfiniteShare, &kSdcLossJump};

}  // namespace gauntlet::models::calibration
