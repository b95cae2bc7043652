// congestion{load}: background traffic takes `load` of a link's capacity,
// or of every link of a congested leaf or spine. It shows in the switch
// counters as load the job did not send.
#include "injectors/faults/builtin_faults.hpp"

namespace gauntlet::injectors::faults {
namespace {

// Whether `link` is one of the switch `target`'s links: a leaf's host and
// fabric links, a spine's fabric links.
bool on_switch(const sim::ComponentId& target, const sim::ComponentId& link) {
  if (target.kind == sim::ComponentKind::leaf) return link.leaf == target.leaf;
  if (target.kind == sim::ComponentKind::spine)
    return link.kind == sim::ComponentKind::fabric_link && link.spine == target.spine;
  return false;
}

// On the packet engine the background traffic is real packets, sharing the
// links' queues (their ECN marks and pauses) with the job's.
void send_background(FaultEffectScope& scope, sim::PacketFaults& packets) {
  const FaultSpec& fault = scope.fault();
  const sim::Topology& topology = scope.topology();
  const sim::ComponentId id = *sim::ComponentId::parse(fault.target);
  const double load = fault.params.number("load");
  for (int link = 0; link < topology.links(); ++link) {
    const sim::ComponentId c = topology.link_component(link);
    if (c.str() != fault.target && !on_switch(id, c)) continue;
    scope.call_during([&packets, link, cause = fault.id, load] { packets.set_background_load(link, cause, load); },
                      [&packets, link, cause = fault.id] { packets.set_background_load(link, cause, 0); });
  }
}

void simulate(FaultEffectScope& scope) {
  if (sim::PacketFaults* packets = scope.packets()) return send_background(scope, *packets);
  const FaultSpec& fault = scope.fault();
  const sim::Topology& topology = scope.topology();
  const sim::ComponentId id = *sim::ComponentId::parse(fault.target);
  PathEffect effect;
  effect.bandwidth_factor = 1.0 - fault.params.number("load");  // background traffic's share of capacity
  if (id.kind != sim::ComponentKind::leaf && id.kind != sim::ComponentKind::spine) {
    scope.set_during(fault.target, effect);
    return;
  }
  for (int link = 0; link < topology.links(); ++link) {
    const sim::ComponentId c = topology.link_component(link);
    if (on_switch(id, c)) scope.set_during(c.str(), effect);
  }
}

void telemetry(const FaultSpec& fault, sim::Nanos end, const sim::Topology& topology,
               models::TelemetryEffects& effects) {
  const sim::ComponentId id = *sim::ComponentId::parse(fault.target);
  for (int link = 0; link < topology.links(); ++link) {
    const sim::ComponentId c = topology.link_component(link);
    if (c.str() == fault.target || on_switch(id, c))
      effects.add_background_load(link, fault.start, end, fault.params.number("load"));
  }
}

}  // namespace

FaultDescriptor congestion() {
  using sim::ComponentKind;
  FaultDescriptor d;
  d.spec = {
      .name = "congestion",
      .summary = "background traffic on a link or on every link of a switch",
      .targets = {ComponentKind::host_link, ComponentKind::fabric_link, ComponentKind::leaf, ComponentKind::spine},
      .params = {{.name = "load",
                  .kind = ParamKind::fraction,
                  .required = true,
                  .help = "background load as a fraction of capacity",
                  .samples = {"0.3", "0.5", "0.8"}}}};
  d.simulated = SimulatedFault{.apply = simulate, .telemetry = telemetry};
  return d;
}

}  // namespace gauntlet::injectors::faults
