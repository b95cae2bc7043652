#pragma once
// Which network engine a scenario runs on (its `engine:` key). Faults act
// on either through the engine's interface; the ones only packets can show
// use its packet_faults() capability.
#include <memory>

#include "harness/scenario/scenario.hpp"
#include "sim/network_engine.hpp"
#include "sim/hybrid_engine.hpp"
#include "sim/packet/packet_engine.hpp"

namespace gauntlet::harness {

struct EngineSetup {
  std::unique_ptr<sim::NetworkEngine> engine;
  sim::PacketEngine* packet = nullptr;  // the same engine, when it is the packet one
  sim::HybridEngine* hybrid = nullptr;  // the same engine, when it is the hybrid one
};

EngineSetup make_engine(const Scenario& scenario, const sim::Topology& topology);

}  // namespace gauntlet::harness
