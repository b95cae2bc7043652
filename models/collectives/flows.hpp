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
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "models/collectives/flow_set_archive.hpp"
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

// Outcomes of flow sets already simulated. A set of flows started together
// on an idle network ends the same way whenever the routes, links and
// endpoints it uses are in the same state, so a set seen before replays its
// recorded completion times instead of being simulated again (a fault that
// ends puts the network back in a state it has simulated before). The key
// holds every input of the outcome in full, so two different sets never
// share an entry.
class FlowOutcomeCache {
 public:
  struct Entry {
    std::vector<std::uint64_t> key;
    std::vector<sim::Nanos> offsets;   // per flow: its last byte's arrival after the start
    std::vector<std::uint32_t> order;  // flows in the order they completed
    sim::Nanos span = 0;               // the last arrival
  };

  explicit FlowOutcomeCache(std::size_t capacity = 8) : capacity_(capacity) {}
  std::shared_ptr<const Entry> find(const std::vector<std::uint64_t>& key) const;
  void store(std::shared_ptr<const Entry> entry);   // the oldest entry leaves when full
  std::uint64_t hits() const { return hits_; }      // sets replayed
  std::uint64_t misses() const { return misses_; }  // sets not found (found but not quiet: neither)
  void count(bool hit) { ++(hit ? hits_ : misses_); }

 private:
  std::size_t capacity_;
  std::deque<std::shared_ptr<const Entry>> entries_;
  std::uint64_t hits_ = 0;
  std::uint64_t misses_ = 0;
};

// Lets start_flows replay a cached outcome: only when no transfer is in
// flight in the network, and when no change of the network is due before
// the replayed set would have finished (`quiet_until`, e.g. the next fault
// edge). Without a cache, or on an engine that does not replay (see
// NetworkEngine::replays), every flow is simulated.
//
// A set not cached yet with at least `apart_from` network flows is handed to
// the engine's simulate_apart, which computes its outcome on an idle copy of
// the network (the flow engine does so group by group in a forked process,
// which large sets need: SimGrid's cost per completed transfer grows with
// every transfer in flight); the outcome is then replayed. An engine that
// declines leaves the set to be simulated in place.
// `archive`, if set, holds outcomes other runs simulated apart: a set found
// there is not simulated again (see FlowSetArchive).
struct FlowReuse {
  FlowOutcomeCache* cache = nullptr;
  sim::Nanos quiet_until = 0;
  std::size_t apart_from = 4096;
  const FlowSetArchive* archive = nullptr;
};

// Starts every flow at the engine's current time: same-host flows over
// NVLink, the others split over `channels` engine transfers each (NCCL
// channels divide a connection's bytes). on_flow(i, at) runs when flow i's
// last byte arrived; on_all() after the last one. `in_flight`, if given,
// counts this call's unfinished flows (so a caller can tell stale traffic is
// still on the wire after it abandoned the collective). A replayed set
// starts no engine transfers.
void start_flows(sim::NetworkEngine& engine, const std::vector<Flow>& flows, int channels,
                 std::function<void(std::size_t, sim::Nanos)> on_flow, std::function<void()> on_all,
                 std::shared_ptr<long> in_flight = nullptr, const FlowReuse& reuse = {});

// Flow sets replayed rather than simulated never reach the engine's
// transfer listeners; telemetry that counts traffic observes them through
// NetworkEngine::observe_replays, which is told of each set's network flows.

// One-way latency of a flow: NVLink step latency or the network route's.
sim::Nanos flow_latency(const sim::NetworkEngine& engine, const Flow& flow);

}  // namespace gauntlet::models
