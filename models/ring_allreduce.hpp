#pragma once
// A ring allreduce as one set of concurrent flows, not 2(n-1) steps: in a
// pipelined ring every edge carries 2(n-1)/n of the buffer, and all edges run
// at once, so the collective lasts as long as its slowest edge plus the
// per-step latency of 2(n-1) steps:
//   T = 2(n-1)/n * S / B_bottleneck + 2(n-1) * alpha.
#include <functional>
#include <vector>

#include "sim/network_engine.hpp"

namespace gauntlet::models {

struct RingResult {
  sim::Nanos start = 0;
  sim::Nanos end = 0;                   // when the last rank finished
  std::vector<sim::Nanos> rank_end;     // per ring position: when its incoming edge finished
};

// Bytes each ring edge carries for an allreduce of `bytes` over n ranks.
double ring_edge_bytes(double bytes, int n);

// Starts the allreduce of `bytes` per rank over `endpoints` (ring order) at
// the engine's current time; calls done when every edge has finished.
// Consecutive ranks on the same endpoint share a host: that edge is NVLink
// and costs no fabric time.
void start_ring_allreduce(sim::NetworkEngine& engine, const std::vector<sim::EndpointId>& endpoints, double bytes,
                          std::function<void(const RingResult&)> done);

}  // namespace gauntlet::models
