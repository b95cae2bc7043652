// agent_hang: a host's monitoring agent stops answering. The data path is
// unaffected by design: only what the agent reports (heartbeats, probes)
// goes missing.
#include "injectors/faults/builtin_faults.hpp"

namespace gauntlet::injectors::faults {

FaultDescriptor agent_hang() {
  FaultDescriptor d;
  d.spec = {.name = "agent_hang", .summary = "a monitoring agent hanging", .targets = {sim::ComponentKind::agent}};
  d.simulated = SimulatedFault{
      .telemetry =
          [](const FaultSpec& fault, sim::Nanos end, const sim::Topology&, models::TelemetryEffects& effects) {
            effects.add_agent_hang(sim::ComponentId::parse(fault.target)->host, fault.start, end);
          },
      .probes = silence_agent};
  return d;
}

}  // namespace gauntlet::injectors::faults
