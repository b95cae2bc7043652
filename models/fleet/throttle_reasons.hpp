#pragma once
// NVML's clock throttle reason bits (nvml.h), as GPU samples report them.
#include <cstdint>

namespace gauntlet::models::throttle_reason {

inline constexpr std::uint32_t kGpuIdle = 0x1;
inline constexpr std::uint32_t kSwPowerCap = 0x4;
inline constexpr std::uint32_t kHwSlowdown = 0x8;
inline constexpr std::uint32_t kSwThermalSlowdown = 0x20;
inline constexpr std::uint32_t kHwThermalSlowdown = 0x40;
inline constexpr std::uint32_t kHwPowerBrakeSlowdown = 0x80;
inline constexpr std::uint32_t kThermal = kSwThermalSlowdown | kHwThermalSlowdown;

}  // namespace gauntlet::models::throttle_reason
