#pragma once
// Which network engine a scenario runs on (its `engine:` key). Faults act
// on any through the engine's interface; what only packets show (packet
// faults, packet counters) through its capabilities.
#include <memory>

#include "harness/scenario/scenario.hpp"
#include "sim/network_engine.hpp"

namespace gauntlet::harness {

std::unique_ptr<sim::NetworkEngine> make_engine(const Scenario& scenario, const sim::Topology& topology);

}  // namespace gauntlet::harness
