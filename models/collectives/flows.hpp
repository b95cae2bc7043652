#pragma once
// NCCL-like collectives as sets of concurrent flows. A collective never runs
// its algorithm's steps one by one: every edge it uses carries its whole
// share of the bytes at once, and the per-step latencies the real algorithm
// pays in sequence are added at the end. That keeps one collective at a few
// thousand engine flows however many steps it has.
//
// Traffic between two GPUs of one host takes NVLink, never the fabric. The
// engine has no NVLink, so such an edge is a timer of bytes / NVLink rate.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "sim/network_engine.hpp"

namespace gauntlet::models {

// NVLink 4 (H100 SXM): 900 GB/s bidirectional per GPU, 450 GB/s each way;
// NCCL's per-step latency over NVLink is a few microseconds.
inline constexpr double kNvlinkBytesPerSecond = 450e9;
inline constexpr sim::Nanos kNvlinkStepLatency = 2 * sim::kMicrosecond;

// Where a rank's traffic enters the network.
struct FlowEnd {
  int host = 0;
  sim::EndpointId endpoint = 0;  // the RNIC it uses (after any NCCL fallback)
};

struct Flow {
  FlowEnd from, to;
  double bytes = 0;
};

// Time one NVLink edge needs for `bytes`, its step latency included.
sim::Nanos nvlink_time(double bytes);

// Starts every flow at the engine's current time: same-host flows over
// NVLink, the others split over `channels` engine transfers each (NCCL
// channels divide a connection's bytes). on_flow(i, at) runs when flow i's
// last byte arrived; on_all() after the last one. `in_flight`, if given,
// counts this call's unfinished flows (so a caller can tell stale traffic is
// still on the wire after it abandoned the collective).
void start_flows(sim::NetworkEngine& engine, const std::vector<Flow>& flows, int channels,
                 std::function<void(std::size_t, sim::Nanos)> on_flow, std::function<void()> on_all,
                 std::shared_ptr<long> in_flight = nullptr);

// One-way latency of a flow: NVLink step latency or the network route's.
sim::Nanos flow_latency(const sim::NetworkEngine& engine, const Flow& flow);

}  // namespace gauntlet::models
