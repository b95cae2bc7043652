#include "harness/runner/probe_wiring.hpp"

#include <optional>

namespace gauntlet::harness {

void arm_probe_faults(models::ProbeService& probes, const std::vector<injectors::FaultSpec>& faults,
                      const injectors::SimulatedFaults& types, const sim::Topology& topology, sim::Nanos horizon) {
  for (const injectors::FaultSpec& f : faults) {
    const injectors::SimulatedFault* type = types.simulated(f.type);
    if (type && type->probes) type->probes(f, f.end().value_or(horizon), topology, probes);
  }
}

std::vector<models::ProbeOrder> probe_orders(const std::vector<ProbeRequest>& requests, const sim::Topology& topology) {
  auto endpoint = [&](const std::string& name) -> std::optional<sim::EndpointId> {
    const auto id = sim::ComponentId::parse(name);
    if (!id || id->kind != sim::ComponentKind::nic || !topology.contains(*id)) return std::nullopt;
    return topology.endpoint(id->host, id->index);
  };
  std::vector<models::ProbeOrder> out;
  for (const ProbeRequest& r : requests) {
    const auto src = endpoint(r.src), dst = endpoint(r.dst);
    if (src && dst && *src != *dst) out.push_back({*src, *dst, r.overlay, r.source_port});
  }
  return out;
}

}  // namespace gauntlet::harness
