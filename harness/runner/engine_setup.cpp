#include "harness/runner/engine_setup.hpp"

#include "sim/flow/flow_engine.hpp"

namespace gauntlet::harness {

EngineSetup make_engine(const Scenario& scenario, const sim::Topology& topology) {
  EngineSetup setup;
  if (scenario.engine == "packet") {
    auto packet = std::make_unique<sim::PacketEngine>(topology, scenario.seed);
    setup.packet = packet.get();
    setup.engine = std::move(packet);
  } else if (scenario.engine == "hybrid") {
    auto hybrid = std::make_unique<sim::HybridEngine>(topology, scenario.seed);
    setup.hybrid = hybrid.get();
    setup.engine = std::move(hybrid);
  } else {
    setup.engine = std::make_unique<sim::FlowEngine>(topology, scenario.seed);
  }
  return setup;
}

}  // namespace gauntlet::harness
