#pragma once
// Which network engine a scenario runs on (its `engine:` key). Faults act
// on any through the engine's interface; what only packets show (packet
// faults, packet counters) through its capabilities.
#include <memory>

#include "harness/scenario/scenario.hpp"
#include "sim/network_engine.hpp"
#include "sim/packet/roce_params.hpp"

namespace gauntlet::harness {

// The packet engine's RoCE parameters the scenario's calibration sets
// (transport.ib_timeout, ...); the others keep their defaults.
sim::RoceParams roce_params_from(const sim::Calibration& calibration);

std::unique_ptr<sim::NetworkEngine> make_engine(const Scenario& scenario, const sim::Topology& topology);

}  // namespace gauntlet::harness
