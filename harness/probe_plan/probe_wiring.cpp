#include "harness/probe_plan/probe_wiring.hpp"

#include <optional>

namespace gauntlet::harness {

void arm_probe_faults(models::ProbeService& probes, const std::vector<injectors::FaultSpec>& faults,
                      const sim::Topology& topology, sim::Nanos horizon) {
  using injectors::FaultType;
  for (const injectors::FaultSpec& f : faults) {
    const sim::Nanos end = f.end().value_or(horizon);
    const auto id = sim::ComponentId::parse(f.target);
    if (!id) continue;
    switch (f.type) {
      case FaultType::link_loss: probes.add_loss(f.target, f.start, end, f.params.rate); break;
      case FaultType::stale_flow_table: probes.add_loss(f.target, f.effect_start(), end, f.params.loss); break;
      case FaultType::agent_hang:
      case FaultType::node_crash:
        if (id->host >= 0 && id->host < topology.hosts()) probes.add_agent_down(id->host, f.start, end);
        break;
      default: break;
    }
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
    if (src && dst && *src != *dst) out.push_back({*src, *dst, r.overlay});
  }
  return out;
}

}  // namespace gauntlet::harness
