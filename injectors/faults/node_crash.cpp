// node_crash: a host goes dark: its GPUs stop, its ports go down with it and
// its monitoring agent falls silent.
#include "injectors/faults/builtin_faults.hpp"

namespace gauntlet::injectors::faults {
namespace {

void simulate(FaultEffectScope& scope) {
  const FaultSpec& fault = scope.fault();
  const sim::Topology& topology = scope.topology();
  const int host = sim::ComponentId::parse(fault.target)->host;
  const auto& jobs = scope.jobs();
  // The job stops first, so its links going down does not cut a steady run short.
  scope.call_at(
      scope.start(),
      [&jobs, host] {
        for (models::TrainingJob* job : jobs) job->fail_host(host);
      },
      false);
  for (int nic = 0; nic < topology.shape().rnics_per_host; ++nic) {
    const std::string link = topology.link_name(topology.host_link(topology.endpoint(host, nic)));
    scope.set_at(scope.start(), link, &kLinkDown, false);
    if (scope.end() != kOpenEnded) scope.set_at(scope.end(), link, nullptr);
  }
  if (scope.end() != kOpenEnded)
    scope.call_at(
        scope.end(),
        [&jobs, host] {
          for (models::TrainingJob* job : jobs) job->repair_host(host);
        },
        false);
}

}  // namespace

// The agent of a host that exists goes silent for the fault's window.
void silence_agent(const FaultSpec& fault, sim::Nanos end, const sim::Topology& topology,
                   models::ProbeService& probes) {
  const int host = sim::ComponentId::parse(fault.target)->host;
  if (host >= 0 && host < topology.hosts()) probes.add_agent_down(host, fault.start, end);
}

FaultDescriptor node_crash() {
  FaultDescriptor d;
  d.spec = {
      .name = "node_crash", .summary = "a host crashing", .targets = {sim::ComponentKind::host}, .fail_stop = true};
  d.simulated = SimulatedFault{.apply = simulate, .probes = silence_agent};
  return d;
}

}  // namespace gauntlet::injectors::faults
