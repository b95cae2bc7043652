#pragma once
// The telemetry side of fault specs: which windows change what the cluster's
// monitoring reports (GPU clocks, host CPU share, background load, agent
// silence, clock skew). Models only know TelemetryEffects; each fault type's
// simulated part says what its fault adds to them. Data-path faults need no
// window here: their link state is the network engine's.
#include <vector>

#include "injectors/sim/simulated_fault.hpp"
#include "models/telemetry/telemetry_effects.hpp"
#include "sim/topology.hpp"

namespace gauntlet::injectors {

// Open-ended faults last until `horizon`.
models::TelemetryEffects telemetry_effects_from(const std::vector<FaultSpec>& faults, const SimulatedFaults& types,
                                                const sim::Topology& topology, sim::Nanos horizon);

}  // namespace gauntlet::injectors
