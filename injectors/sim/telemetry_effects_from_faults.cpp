#include "injectors/sim/telemetry_effects_from_faults.hpp"

#include <algorithm>

namespace gauntlet::injectors {

models::TelemetryEffects telemetry_effects_from(const std::vector<FaultSpec>& faults, const SimulatedFaults& types,
                                                const sim::Topology& topology, sim::Nanos horizon) {
  models::TelemetryEffects effects;
  for (const FaultSpec& fault : faults) {
    const SimulatedFault* type = types.simulated(fault.type);
    if (!type || !type->telemetry) continue;
    const sim::Nanos end = fault.end() ? std::min(*fault.end(), horizon) : horizon;
    type->telemetry(fault, end, topology, effects);
  }
  return effects;
}

}  // namespace gauntlet::injectors
