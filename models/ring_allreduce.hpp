#pragma once
// Ring collectives (allreduce, reduce-scatter, allgather) as one set of
// concurrent flows, not 2(n-1) steps: in a pipelined ring every edge carries
// its whole share of the buffer and all edges run at once, so the collective
// lasts as long as its slowest edge plus the per-step latency of its steps:
//   allreduce:                T = 2(n-1)/n * S / B_bottleneck + 2(n-1) * alpha
//   reduce-scatter/allgather: T =  (n-1)/n * S / B_bottleneck +  (n-1) * alpha
// where S is the per-rank buffer and alpha the slowest edge's latency.
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "models/collectives/flows.hpp"
#include "sim/network_engine.hpp"

namespace gauntlet::models {

enum class RingOp { allreduce, reduce_scatter, allgather };
std::string_view ring_op_name(RingOp op);

struct RingResult {
  sim::Nanos start = 0;
  sim::Nanos end = 0;                // when the last rank finished
  std::vector<sim::Nanos> rank_end;  // per ring position: when its incoming edge finished
};

// Bytes each ring edge carries for an allreduce of `bytes` over n ranks.
double ring_edge_bytes(double bytes, int n);
double ring_edge_bytes(RingOp op, double bytes, int n);
int ring_steps(RingOp op, int n);

// Starts the collective over the ranks in ring order at the engine's current
// time; calls done when every edge has finished. Edges between two ranks of
// one host use NVLink; the others are split over `channels` flows.
void start_ring(sim::NetworkEngine& engine, const std::vector<FlowEnd>& ring, RingOp op, double bytes, int channels,
                std::function<void(const RingResult&)> done, std::shared_ptr<long> in_flight = nullptr);

// Several rings of the same collective started together as one set of
// flows (as a job's data-parallel groups start at once), so a replay can
// reuse the whole set; done(k, result) runs when ring k has finished.
void start_rings(sim::NetworkEngine& engine, const std::vector<std::vector<FlowEnd>>& rings, RingOp op, double bytes,
                 int channels, std::function<void(std::size_t, const RingResult&)> done,
                 std::shared_ptr<long> in_flight = nullptr, const FlowReuse& reuse = {});

// The same collective run step by step, as the algorithm is written: every
// step moves one chunk of S/n over every edge at once and the next step
// starts when the last chunk has arrived, so it lasts
//   steps * (S/n / B_bottleneck + alpha),  steps = 2(n-1) for an allreduce.
// A reference for the concurrent-edge form (tests and benchmarks): it costs
// steps times as many engine flows.
void start_ring_stepwise(sim::NetworkEngine& engine, const std::vector<FlowEnd>& ring, RingOp op, double bytes,
                         int channels, std::function<void(const RingResult&)> done);

// The allreduce over RNIC endpoints (ring order), one channel.
void start_ring_allreduce(sim::NetworkEngine& engine, const std::vector<sim::EndpointId>& endpoints, double bytes,
                          std::function<void(const RingResult&)> done);

}  // namespace gauntlet::models
