#pragma once
// The telemetry side of fault specs: which windows change what the cluster's
// monitoring reports (GPU clocks, host CPU share, background load, agent
// silence, clock skew). Models only know TelemetryEffects; this is where fault
// specs are read for them. nic_down needs no window here: its link state is
// the network engine's, and it raises no alarm (the incident's blind spot).
#include <vector>

#include "injectors/spec/fault_spec.hpp"
#include "models/telemetry/telemetry_effects.hpp"
#include "sim/topology.hpp"

namespace gauntlet::injectors {

// Open-ended faults last until `horizon`.
models::TelemetryEffects telemetry_effects_from(const std::vector<FaultSpec>& faults, const sim::Topology& topology,
                                                sim::Nanos horizon);

}  // namespace gauntlet::injectors
