// gpu_throttle{slowdown}: a GPU runs `slowdown` slower (power or thermal
// capping); its clocks show it.
#include "injectors/faults/builtin_faults.hpp"

namespace gauntlet::injectors::faults {

FaultDescriptor gpu_throttle() {
  FaultDescriptor d;
  d.spec = {.name = "gpu_throttle",
            .summary = "a GPU computing slower",
            .targets = {sim::ComponentKind::gpu},
            .params = {{.name = "slowdown",
                        .kind = ParamKind::fraction,
                        .required = true,
                        .help = "fraction of the GPU's speed lost"}}};
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
            effects.add_gpu_throttle(id.host, id.index, fault.start, end, fault.params.number("slowdown"));
          }};
  d.real =
      real::RealDriver{.targets = {sim::ComponentKind::gpu}, .keys = {"method"}, .build = real::gpu_throttle_program};
  return d;
}

}  // namespace gauntlet::injectors::faults
