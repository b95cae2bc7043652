#pragma once
// Connects the simulated probe service to a run: which faults make probes
// lossy or silence an agent, and detectors' probe requests as orders.
#include <vector>

#include "harness/detectors/detector.hpp"
#include "injectors/sim/simulated_fault.hpp"
#include "models/probe_service.hpp"

namespace gauntlet::harness {

// What each fault's type does to probes (loss windows, silent agents), as
// its simulated part says. Open-ended faults last until `horizon`.
void arm_probe_faults(models::ProbeService& probes, const std::vector<injectors::FaultSpec>& faults,
                      const injectors::SimulatedFaults& types, const sim::Topology& topology, sim::Nanos horizon);

// Requests naming RNICs this cluster has; others are dropped.
std::vector<models::ProbeOrder> probe_orders(const std::vector<ProbeRequest>& requests, const sim::Topology& topology);

}  // namespace gauntlet::harness
