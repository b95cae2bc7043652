// clock_skew{offset}: a host's clock runs `offset` off; only the timestamps
// of its telemetry move.
#include "injectors/faults/builtin_faults.hpp"

namespace gauntlet::injectors::faults {

FaultDescriptor clock_skew() {
  FaultDescriptor d;
  d.spec = {.name = "clock_skew",
            .summary = "a host's telemetry timestamps shifted",
            .targets = {sim::ComponentKind::host},
            .params = {{.name = "offset",
                        .kind = ParamKind::signed_duration,
                        .required = true,
                        .unit = "ns",
                        .help = "added to the host's telemetry timestamps",
                        .samples = {"5ms", "-20ms", "50ms"}}},
            .skews_clocks = true};
  d.simulated = SimulatedFault{
      .telemetry = [](const FaultSpec& fault, sim::Nanos end, const sim::Topology&, models::TelemetryEffects& effects) {
        effects.add_clock_skew(sim::ComponentId::parse(fault.target)->host, fault.start, end,
                               fault.params.duration("offset"));
      }};
  return d;
}

}  // namespace gauntlet::injectors::faults
