#include "harness/runner/engine_setup.hpp"

#include "sim/flow/flow_engine.hpp"
#include "sim/hybrid_engine.hpp"
#include "sim/packet/packet_engine.hpp"

namespace gauntlet::harness {

std::unique_ptr<sim::NetworkEngine> make_engine(const Scenario& scenario, const sim::Topology& topology) {
  if (scenario.engine == "packet") return std::make_unique<sim::PacketEngine>(topology, scenario.seed);
  if (scenario.engine == "hybrid") return std::make_unique<sim::HybridEngine>(topology, scenario.seed);
  return std::make_unique<sim::FlowEngine>(topology, scenario.seed);
}

}  // namespace gauntlet::harness
