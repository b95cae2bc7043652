#include "injectors/sim/telemetry_effects_from_faults.hpp"

namespace gauntlet::injectors {

models::TelemetryEffects telemetry_effects_from(const std::vector<FaultSpec>& faults, const sim::Topology& topology,
                                                sim::Nanos horizon) {
  models::TelemetryEffects effects;
  for (const FaultSpec& fault : faults) {
    const auto id = sim::ComponentId::parse(fault.target);
    if (!id) continue;  // reconfigure takes no target
    const sim::Nanos start = fault.start;
    const sim::Nanos end = fault.end() ? std::min(*fault.end(), horizon) : horizon;
    const FaultParams& p = fault.params;
    switch (fault.type) {
      case FaultType::gpu_throttle: effects.add_gpu_throttle(id->host, id->index, start, end, p.slowdown); break;
      case FaultType::cpu_contention: effects.add_cpu_contention(id->host, start, end, p.slowdown); break;
      case FaultType::agent_hang: effects.add_agent_hang(id->host, start, end); break;
      case FaultType::clock_skew: effects.add_clock_skew(id->host, start, end, p.offset); break;
      case FaultType::congestion: {
        // A congested switch loads every link it has; a link target loads that link.
        for (int link = 0; link < topology.links(); ++link) {
          const sim::ComponentId c = topology.link_component(link);
          const bool on_target = c.str() == fault.target ||
                                 (id->kind == sim::ComponentKind::leaf && c.leaf == id->leaf) ||
                                 (id->kind == sim::ComponentKind::spine && c.kind == sim::ComponentKind::fabric_link &&
                                  c.spine == id->spine);
          if (on_target) effects.add_background_load(link, start, end, p.load);
        }
        break;
      }
      default: break;  // data-path faults show in telemetry through the models themselves
    }
  }
  return effects;
}

}  // namespace gauntlet::injectors
