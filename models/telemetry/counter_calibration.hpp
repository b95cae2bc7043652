#pragma once
// Calibration attributes of the counters and fields the telemetry carries
// beyond the core samples (sim/calibration.hpp): what a DCGM field reads on a
// healthy GPU when no fault or healthy variation moves it.
#include "sim/calibration.hpp"

namespace gauntlet::models::calibration {

inline constexpr sim::Attribute kGpuMemoryClock{"gpu.memory_clock",
                                                sim::AttributeUnit::megahertz,
                                                2619,
                                                100,
                                                10000,
                                                "HBM clock a GPU reports (DCGM_FI_DEV_MEM_CLOCK)",
                                                "H100 SXM 80GB HBM3 maximum memory clock as nvidia-smi -q reports it"};
inline constexpr sim::Attribute kGpuFramebuffer{
    "gpu.framebuffer",
    sim::AttributeUnit::bytes,
    81559.0 * 1048576,
    1048576,
    1e13,
    "framebuffer memory of a GPU (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE)",
    "H100 SXM 80GB: nvidia-smi reports 81559 MiB"};
inline constexpr sim::Attribute kGpuFramebufferInUse{
    "gpu.framebuffer_in_use",
    sim::AttributeUnit::ratio,
    0.9,
    0,
    1,
    "share of the framebuffer a training job holds on each GPU it runs on (DCGM_FI_DEV_FB_USED)",
    ""};

inline constexpr const sim::Attribute* kCounterAttributes[] = {&kGpuMemoryClock, &kGpuFramebuffer,
                                                               &kGpuFramebufferInUse};

}  // namespace gauntlet::models::calibration
