// link_loss{rate}: a link drops each packet with probability `rate`. RoCE's
// go-back-N turns that into a super-linear goodput loss (on the packet
// engine the frames themselves are corrupted, counted as CRC errors; the
// flow engine takes goodput, retransmissions and NAKs from the network
// calibration table the packet engine wrote, and draws per transfer the
// retransmission timeouts that table's endless streams never wait out), and
// from the retry exhaustion rate on (about 17.7%) the transport fails the
// collective every transport timeout the job spends crossing the link.
#include <algorithm>

#include "injectors/faults/builtin_faults.hpp"

namespace gauntlet::injectors::faults {
namespace {

void simulate(FaultEffectScope& scope) {
  const FaultSpec& fault = scope.fault();
  const double rate = fault.params.number("rate");
  const sim::LinkId link = *scope.topology().link_of(*sim::ComponentId::parse(fault.target));
  models::CommunicatorModel& communicator = scope.communicator();
  if (sim::PacketFaults* packets = scope.packets()) {
    // Frames are corrupted on the wire; go-back-N makes of it what it does.
    scope.call_during([packets, link, cause = fault.id, rate] { packets->set_link_loss(link, cause, rate); },
                      [packets, link, cause = fault.id] { packets->set_link_loss(link, cause, 0); });
  } else {
    PathEffect effect;
    effect.bandwidth_factor = communicator.link_goodput(link, rate);
    scope.set_during(fault.target, effect);
    // The table's goodput is a long stream's; a message also ends, and a
    // hole near its end or a lost NAK waits out a retransmission timeout.
    if (sim::TransportStalls* stalls = communicator.transport_stalls())
      scope.call_during(
          [stalls, link, cause = fault.id, rates = communicator.transfer_stalls(link, rate)] {
            stalls->set_link_stalls(link, cause, rates);
          },
          [stalls, link, cause = fault.id] { stalls->set_link_stalls(link, cause, {}); });
  }
  if (communicator.exhausts_retries(rate))
    communicator.watch_retry_exhaustion(scope.start(), std::min(scope.end(), scope.horizon()), link);
}

// The flow engine's counters read the loss off these windows.
void telemetry(const FaultSpec& fault, sim::Nanos end, const sim::Topology& topology,
               models::TelemetryEffects& effects) {
  effects.add_link_loss(*topology.link_of(*sim::ComponentId::parse(fault.target)), fault.start, end,
                        fault.params.number("rate"));
}

}  // namespace

FaultDescriptor link_loss() {
  using sim::ComponentKind;
  FaultDescriptor d;
  d.spec = {.name = "link_loss",
            .summary = "a lossy link: RoCE goodput under go-back-N, NCCL errors past retry exhaustion",
            .targets = {ComponentKind::host_link, ComponentKind::fabric_link},
            .params = {{.name = "rate",
                        .kind = ParamKind::fraction,
                        .required = true,
                        .help = "probability that a packet is lost",
                        .samples = {"0.001", "0.01", "0.05", "0.2"}}}};
  d.simulated = SimulatedFault{
      .apply = simulate,
      .telemetry = telemetry,
      .probes = [](const FaultSpec& fault, sim::Nanos end, const sim::Topology&, models::ProbeService& probes) {
        probes.add_loss(fault.target, fault.start, end, fault.params.number("rate"));
      }};
  d.real = real::RealDriver{.targets = {ComponentKind::nic, ComponentKind::host_link},
                            .handles_site = true,
                            .build = real::link_loss_program};
  return d;
}

}  // namespace gauntlet::injectors::faults
