// nic_down{fallback, alarm}: an RNIC's link goes down. NCCL moves the RNIC's
// GPUs to a fallback RNIC before anything is sent on the dead link, silently
// (the fallback then carries two rings' edges); with no other RNIC on the
// host there is nothing to fall back to and the transport times out.
#include "injectors/faults/builtin_faults.hpp"

namespace gauntlet::injectors::faults {
namespace {

void simulate(FaultEffectScope& scope) {
  const FaultSpec& fault = scope.fault();
  const sim::Topology& topology = scope.topology();
  const sim::ComponentId id = *sim::ComponentId::parse(fault.target);
  const std::string& configured = fault.params.text("fallback");
  const int host = id.host, nic = id.index;
  const int fallback = !configured.empty()
                           ? sim::ComponentId::parse(configured)->index
                           : models::nccl_fallback_rnic(nic, topology.shape().rnics_per_host).value_or(-1);
  const std::string link = topology.link_name(topology.host_link(topology.endpoint(host, nic)));
  const auto& jobs = scope.jobs();
  const bool falls_back = fallback >= 0 && fallback != nic;
  if (falls_back) {
    scope.call_during(
        [&jobs, host, nic, fallback] {
          for (models::TrainingJob* job : jobs) job->set_nic_fallback(host, nic, fallback);
        },
        [&jobs, host, nic] {
          for (models::TrainingJob* job : jobs) job->clear_nic_fallback(host, nic);
        });
  }
  scope.set_during(link, kLinkDown);
  if (!falls_back) scope.watch_outage(scope.start(), link);
}

std::optional<ParamProblem> check(const FaultSpec& fault) {
  const std::string& configured = fault.params.text("fallback");
  if (configured.empty()) return std::nullopt;
  const auto fallback = sim::ComponentId::parse(configured);
  if (fallback->kind != sim::ComponentKind::nic)
    return ParamProblem{"fallback", "must be an RNIC such as h3.nic1, got '" + configured + "'"};
  if (fault.target == configured)
    return ParamProblem{"fallback", "cannot be the failing RNIC " + fault.target + " itself"};
  if (sim::ComponentId::parse(fault.target)->host != fallback->host)
    return ParamProblem{"fallback",
                        "must be an RNIC of the same host as " + fault.target + ", got '" + configured + "'"};
  return std::nullopt;
}

}  // namespace

FaultDescriptor nic_down() {
  FaultDescriptor d;
  d.spec = {.name = "nic_down",
            .summary = "an RNIC's link down; NCCL falls back to another RNIC without a word",
            .targets = {sim::ComponentKind::nic},
            .params = {{.name = "fallback",
                        .kind = ParamKind::component,
                        .help = "the RNIC that takes over (default: NCCL's choice)"},
                       {.name = "alarm", .kind = ParamKind::boolean, .help = "whether a hardware alarm is raised"}},
            .check = check};
  d.simulated = SimulatedFault{.apply = simulate};
  return d;
}

}  // namespace gauntlet::injectors::faults
