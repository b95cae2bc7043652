// port_flap{period, down}: a link (or an RNIC's host link) goes down for
// `down` at the start of every `period`. A down longer than the transport
// timeout fails the collective crossing it.
#include <algorithm>

#include "injectors/faults/builtin_faults.hpp"

namespace gauntlet::injectors::faults {
namespace {

void simulate(FaultEffectScope& scope) {
  const FaultSpec& fault = scope.fault();
  const sim::Topology& topology = scope.topology();
  const sim::ComponentId id = *sim::ComponentId::parse(fault.target);
  std::string link = fault.target;
  if (id.kind == sim::ComponentKind::nic)
    link = topology.link_name(topology.host_link(topology.endpoint(id.host, id.index)));
  const sim::Nanos period = fault.params.duration("period"), down = fault.params.duration("down");
  const sim::Nanos last = std::min(scope.end(), scope.horizon());
  for (sim::Nanos t = scope.start(); t < last; t += period) {
    const sim::Nanos up = std::min(t + down, last);
    scope.set_at(t, link, &kLinkDown);
    scope.set_at(up, link, nullptr);
    if (up - t > scope.communicator().transport_timeout()) scope.watch_outage(t, link);
  }
}

std::optional<ParamProblem> check(const FaultSpec& fault) {
  const sim::Nanos period = fault.params.duration("period"), down = fault.params.duration("down");
  if (period <= 0) return ParamProblem{"period", "must be longer than zero"};
  if (down <= 0 || down >= period)
    return ParamProblem{"down",
                        "must be longer than zero and shorter than period (" + sim::format_duration(period) + ")"};
  return std::nullopt;
}

}  // namespace

FaultDescriptor port_flap() {
  using sim::ComponentKind;
  FaultDescriptor d;
  d.spec = {.name = "port_flap",
            .summary = "a port going down for `down` every `period`",
            .targets = {ComponentKind::host_link, ComponentKind::fabric_link, ComponentKind::nic},
            .params = {{.name = "period",
                        .kind = ParamKind::duration,
                        .required = true,
                        .unit = "ns",
                        .help = "one down/up cycle",
                        .samples = {"5s", "12s", "30s"}},
                       {.name = "down",
                        .kind = ParamKind::duration,
                        .required = true,
                        .unit = "ns",
                        .help = "down time at the start of each cycle",
                        .samples = {"200ms", "1s", "3s"}}},
            .repeats_every = "period",
            .check = check};
  d.simulated = SimulatedFault{.apply = simulate};
  d.real =
      real::RealDriver{.targets = {ComponentKind::nic, ComponentKind::host_link}, .build = real::port_flap_program};
  return d;
}

}  // namespace gauntlet::injectors::faults
