// stale_flow_table{extra_latency, cap_gbps, loss, invalidate_after}: an
// RNIC's offloaded flow entries go stale. They keep the fast path until the
// vSwitch invalidates them, `invalidate_after` past the onset; from then on
// the RNIC's traffic takes the slow software path: added latency, a
// throughput cap and that path's own (small) loss.
#include <algorithm>

#include "injectors/faults/builtin_faults.hpp"

namespace gauntlet::injectors::faults {
namespace {

sim::Nanos slow_path_from(const FaultSpec& fault) { return fault.start + fault.params.duration("invalidate_after"); }

void simulate(FaultEffectScope& scope) {
  const FaultSpec& fault = scope.fault();
  const FaultParams& p = fault.params;
  const sim::Topology& topology = scope.topology();
  const sim::ComponentId id = *sim::ComponentId::parse(fault.target);
  PathEffect effect;
  effect.extra_latency = p.duration("extra_latency");
  const sim::LinkId host_link = topology.host_link(topology.endpoint(id.host, id.index));
  const double line = topology.link_bytes_per_second(host_link);
  if (p.number("cap_gbps") > 0) effect.bandwidth_factor = std::min(1.0, p.number("cap_gbps") * 1e9 / 8.0 / line);
  effect.bandwidth_factor *= scope.communicator().link_goodput(host_link, p.number("loss"));
  const sim::Nanos slow_from = slow_path_from(fault);
  if (slow_from >= scope.end()) return;
  scope.set_at(slow_from, fault.target, &effect);
  if (scope.end() != kOpenEnded) scope.set_at(scope.end(), fault.target, nullptr);
}

std::optional<ParamProblem> check(const FaultSpec& fault) {
  if (fault.duration && fault.params.has("invalidate_after") &&
      fault.params.duration("invalidate_after") >= *fault.duration)
    return ParamProblem{"invalidate_after", "must be shorter than the fault's duration (" +
                                                sim::format_duration(*fault.duration) +
                                                "), or the slow path never shows"};
  return std::nullopt;
}

std::optional<std::string> check_real(const real::RealFault& fault) {
  if (fault.match.empty() && fault.mechanism != "site")
    return "stale_flow_table needs 'match': a stale entry steers some flows, not the whole port";
  return std::nullopt;
}

}  // namespace

FaultDescriptor stale_flow_table() {
  FaultDescriptor d;
  d.spec = {.name = "stale_flow_table",
            .summary = "stale offloaded flow entries: the RNIC's traffic falls to the slow path",
            .targets = {sim::ComponentKind::flow_table},
            .params = {{.name = "extra_latency",
                        .kind = ParamKind::duration,
                        .required = true,
                        .unit = "ns",
                        .help = "one-way latency the slow path adds",
                        .samples = {"5us", "40us", "120us"}},
                       {.name = "cap_gbps",
                        .kind = ParamKind::positive_number,
                        .unit = "Gbit/s",
                        .help = "slow-path throughput cap (none when left out)",
                        .samples = {"50", "100"}},
                       {.name = "loss",
                        .kind = ParamKind::fraction,
                        .help = "slow-path loss probability",
                        .samples = {"0.0005", "0.005"}},
                       {.name = "invalidate_after",
                        .kind = ParamKind::duration,
                        .unit = "ns",
                        .help = "how long the stale entries keep the fast path",
                        .simulated_only = true}},
            .check = check};
  d.simulated = SimulatedFault{
      .apply = simulate,
      .probes = [](const FaultSpec& fault, sim::Nanos end, const sim::Topology&, models::ProbeService& probes) {
        probes.add_loss(fault.target, slow_path_from(fault), end, fault.params.number("loss"));
      }};
  d.real = real::RealDriver{.targets = {sim::ComponentKind::flow_table},
                            .keys = {"match"},
                            .handles_site = true,
                            .check = check_real,
                            .build = real::stale_flow_program};
  return d;
}

}  // namespace gauntlet::injectors::faults
