// gpu_throttle{slowdown, cause}: a GPU runs `slowdown` slower than its own
// healthy pace; its clock drops by as much from its own healthy clock and
// NVML's throttle reasons show the cause's bit (thermal causes also heat it).
#include <cstdint>
#include <string>

#include "injectors/faults/builtin_faults.hpp"
#include "models/fleet/throttle_reasons.hpp"

namespace gauntlet::injectors::faults {
namespace {

// NVML's bit for each cause a scenario may name.
std::uint32_t reason_bits(const std::string& cause) {
  namespace r = models::throttle_reason;
  if (cause == "hw_slowdown") return r::kHwSlowdown;
  if (cause == "hw_thermal") return r::kHwThermalSlowdown;
  if (cause == "power_brake") return r::kHwPowerBrakeSlowdown;
  return r::kSwThermalSlowdown;  // "sw_thermal", the default
}

}  // namespace

FaultDescriptor gpu_throttle() {
  FaultDescriptor d;
  d.spec = {.name = "gpu_throttle",
            .summary = "a GPU computing slower",
            .targets = {sim::ComponentKind::gpu},
            .params = {{.name = "slowdown",
                        .kind = ParamKind::fraction,
                        .required = true,
                        .help = "fraction of the GPU's speed lost",
                        .samples = {"0.1", "0.3", "0.5"}},
                       {.name = "cause",
                        .kind = ParamKind::choice,
                        .help = "what throttles it, as NVML's throttle reasons report it: sw_thermal (0x20, the "
                                "default), hw_thermal (0x40), hw_slowdown (0x8), power_brake (0x80)",
                        .simulated_only = true,
                        .choices = {"sw_thermal", "hw_thermal", "hw_slowdown", "power_brake"},
                        .samples = {"sw_thermal", "hw_thermal", "hw_slowdown", "power_brake"}}}};
  d.simulated = SimulatedFault{
      .apply =
          [](FaultEffectScope& scope) {
            PathEffect effect;
            effect.speed_factor = 1.0 - scope.fault().params.number("slowdown");
            scope.set_during(scope.fault().target, effect);
          },
      .telemetry =
          [](const FaultSpec& fault, sim::Nanos end, const sim::Topology&, models::TelemetryEffects& effects) {
            const sim::ComponentId id = *sim::ComponentId::parse(fault.target);
            effects.add_gpu_throttle(id.host, id.index, fault.start, end, fault.params.number("slowdown"),
                                     reason_bits(fault.params.text("cause")));
          }};
  d.real =
      real::RealDriver{.targets = {sim::ComponentKind::gpu}, .keys = {"method"}, .build = real::gpu_throttle_program};
  return d;
}

}  // namespace gauntlet::injectors::faults
