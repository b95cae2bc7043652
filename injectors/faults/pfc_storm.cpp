// pfc_storm: a port that keeps sending PFC PAUSE frames for the fault's
// window, as a NIC whose receive path is stuck does. Its peer stops sending
// the lossless class; the peer's queue fills and pauses the ports feeding
// it in turn, so flows that never cross the storming port stall too (head-
// of-line blocking spreading through the fabric). Only an engine that
// models PFC can act it out.
//
// The target names the storming port: an RNIC pauses its leaf; a host link
// is the leaf's port toward the RNIC, which it pauses; a fabric link is the
// leaf's port toward the spine, which it pauses.
#include <algorithm>

#include "injectors/faults/builtin_faults.hpp"

namespace gauntlet::injectors::faults {
namespace {

void simulate(FaultEffectScope& scope) {
  sim::PacketFaults* packets = scope.packets();
  if (!packets) return;  // the loader refuses the fault on other engines
  const sim::Topology& topology = scope.topology();
  const sim::ComponentId id = *sim::ComponentId::parse(scope.fault().target);
  const sim::Nanos until = std::min(scope.end(), scope.horizon());
  if (id.kind == sim::ComponentKind::nic) {
    const sim::EndpointId endpoint = topology.endpoint(id.host, id.index);
    scope.call_at(scope.start(),
                  [packets, endpoint, until] { packets->start_pfc_storm_from_endpoint(endpoint, until); });
  } else {
    const sim::LinkId link = *topology.link_of(id);
    scope.call_at(scope.start(), [packets, link, until] { packets->start_pfc_storm_from_leaf(link, until); });
  }
}

}  // namespace

FaultDescriptor pfc_storm() {
  using sim::ComponentKind;
  FaultDescriptor d;
  d.spec = {.name = "pfc_storm",
            .summary = "a port that keeps sending PFC pause frames; head-of-line blocking spreads from it",
            .targets = {ComponentKind::nic, ComponentKind::host_link, ComponentKind::fabric_link},
            .needs_packets = true};
  d.simulated = SimulatedFault{.apply = simulate};
  return d;
}

}  // namespace gauntlet::injectors::faults
