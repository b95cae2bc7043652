#pragma once
// The built-in fault types, one file each; each function returns its type's
// descriptor. The order here is the order of `gauntlet validate`'s list and
// of "known types" in messages.
#include "injectors/faults/fault_catalog.hpp"

namespace gauntlet::injectors::faults {

FaultDescriptor link_loss();
FaultDescriptor port_flap();
FaultDescriptor stale_flow_table();
FaultDescriptor gpu_throttle();
FaultDescriptor nic_down();
FaultDescriptor congestion();
FaultDescriptor cpu_contention();
FaultDescriptor gpu_fail();
FaultDescriptor node_crash();
FaultDescriptor agent_hang();
FaultDescriptor clock_skew();
FaultDescriptor reconfigure();
FaultDescriptor pfc_storm();
FaultDescriptor gpu_hbm_error();
FaultDescriptor gpu_sram_error();
FaultDescriptor gpu_gsp_error();
FaultDescriptor gpu_sdc();

// The probe effect node_crash and agent_hang share: the host's agent goes
// silent for the fault's window.
void silence_agent(const FaultSpec& fault, sim::Nanos end, const sim::Topology& topology, models::ProbeService& probes);

// A parameter whose default is a calibration attribute (ParamInfo::
// calibrated): the fault's value, else the attribute's default.
sim::Nanos calibrated_duration(const FaultSpec& fault, std::string_view param, const sim::Attribute& attribute);
double calibrated_number(const FaultSpec& fault, std::string_view param, const sim::Attribute& attribute);

// The error a training process dies with when its GPU reports an
// uncorrectable ECC error (CUDA's cudaErrorECCUncorrectable, as PyTorch
// prints it).
inline constexpr const char* kUncorrectableEccError = "CUDA error: uncorrectable ECC error encountered";

// The GPU fails in every job of the scope at `at`, its processes dying with
// `error`, and is repaired at `back` if that falls within the run.
void fail_gpu_until(FaultEffectScope& scope, int host, int gpu, sim::Nanos at, sim::Nanos back,
                    const std::string& error);
// gpu_fail's effect: the fault's GPU is down for the fault's window.
void fail_target_gpu_during(FaultEffectScope& scope);

}  // namespace gauntlet::injectors::faults
