#include "harness/runner/engine_setup.hpp"

#include "models/packet_transport_calibration.hpp"
#include "sim/flow/flow_engine.hpp"
#include "sim/hybrid_engine.hpp"
#include "sim/packet/packet_engine.hpp"

namespace gauntlet::harness {

sim::RoceParams roce_params_from(const sim::Calibration& calibration) {
  namespace k = models::calibration;
  sim::RoceParams params;
  params.transport.ib_timeout = calibration.count(k::kIbTimeout);
  params.transport.retry_count = calibration.count(k::kIbRetryCount);
  params.transport.initial_retransmit_timeout = calibration.duration(k::kRetransmitInitialTimeout);
  return params;
}

std::unique_ptr<sim::NetworkEngine> make_engine(const Scenario& scenario, const sim::Topology& topology) {
  const sim::RoceParams roce = roce_params_from(scenario.calibration);
  if (scenario.engine == "packet") return std::make_unique<sim::PacketEngine>(topology, scenario.seed, roce);
  if (scenario.engine == "hybrid") {
    sim::HybridParams params;
    params.roce = roce;
    return std::make_unique<sim::HybridEngine>(topology, scenario.seed, params);
  }
  return std::make_unique<sim::FlowEngine>(topology, scenario.seed);
}

}  // namespace gauntlet::harness
