// cpu_contention{slowdown}: something else takes the host's CPUs. Data
// loading and kernel launch share them, so every GPU of the host loses the
// same fraction of its step at once, while its GEMMs stay as fast.
#include "injectors/faults/builtin_faults.hpp"

namespace gauntlet::injectors::faults {

FaultDescriptor cpu_contention() {
  using sim::ComponentKind;
  FaultDescriptor d;
  d.spec = {.name = "cpu_contention",
            .summary = "a host's CPUs taken by other work: all its GPUs' steps slow together",
            .targets = {ComponentKind::cpu, ComponentKind::host},
            .params = {{.name = "slowdown",
                        .kind = ParamKind::fraction,
                        .required = true,
                        .help = "fraction of each GPU's step rate lost",
                        .samples = {"0.1", "0.2"}}}};
  d.simulated = SimulatedFault{
      .apply =
          [](FaultEffectScope& scope) {
            const int host = sim::ComponentId::parse(scope.fault().target)->host;
            PathEffect effect;
            effect.speed_factor = 1.0 - scope.fault().params.number("slowdown");
            for (int gpu = 0; gpu < scope.topology().shape().gpus_per_host; ++gpu)
              scope.set_during(sim::ComponentId::make_gpu(host, gpu).str(), effect);
          },
      .telemetry =
          [](const FaultSpec& fault, sim::Nanos end, const sim::Topology&, models::TelemetryEffects& effects) {
            effects.add_cpu_contention(sim::ComponentId::parse(fault.target)->host, fault.start, end,
                                       fault.params.number("slowdown"));
          }};
  d.real = real::RealDriver{
      .targets = {ComponentKind::cpu, ComponentKind::host}, .host_wide = true, .build = real::cpu_contention_program};
  return d;
}

}  // namespace gauntlet::injectors::faults
