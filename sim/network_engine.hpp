#pragma once
// The narrow interface through which models use a network engine: time,
// timers, transfers between RNIC endpoints, and state changes of links and
// endpoints. The flow backend (SimGrid) implements it; a packet-level backend
// can implement the same calls.
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace gauntlet::sim {

using EndpointId = int;  // RNIC index, see Topology
using LinkId = int;      // see Topology
using TimerId = std::uint64_t;
using TransferId = std::uint64_t;

// What happened to a transfer, for observers that account traffic (telemetry
// samplers): it started, its route changed (routing converged around a failed
// link), or its last byte left the sender (`at` excludes propagation delay).
struct TransferEvent {
  enum class Kind { started, rerouted, finished };
  Kind kind = Kind::started;
  TransferId id = 0;
  EndpointId src = 0;
  EndpointId dst = 0;
  double bytes = 0;  // the transfer's total size
  Nanos at = 0;
};

// The quality of a link, or of an endpoint's offload path (its flow table),
// relative to nominal.
struct PathState {
  double bandwidth_factor = 1.0;  // multiplies nominal capacity
  Nanos extra_latency = 0;        // added one-way latency
  bool up = true;                 // down: traffic through it stalls until it is up again
  bool operator==(const PathState&) const = default;
};

class NetworkEngine {
 public:
  using TimerCallback = std::function<void()>;
  using TransferCallback = std::function<void(Nanos finished_at)>;

  virtual ~NetworkEngine() = default;

  virtual const Topology& topology() const = 0;
  virtual Nanos now() const = 0;

  // Timers scheduled for the same instant run in the order they were scheduled.
  virtual TimerId schedule_at(Nanos at, TimerCallback callback) = 0;
  virtual void cancel(TimerId id) = 0;

  // Moves `bytes` from src to dst over the current route; on_done runs when
  // the last byte arrives (route latency included).
  virtual TransferId start_transfer(EndpointId src, EndpointId dst, double bytes, TransferCallback on_done) = 0;

  virtual void set_link_state(LinkId link, const PathState& state) = 0;
  virtual void set_endpoint_state(EndpointId endpoint, const PathState& state) = 0;
  virtual const PathState& link_state(LinkId link) const = 0;
  virtual const PathState& endpoint_state(EndpointId endpoint) const = 0;

  // The links a transfer from src to dst crosses now, and its one-way latency.
  virtual std::vector<LinkId> route(EndpointId src, EndpointId dst) const = 0;
  virtual Nanos route_latency(EndpointId src, EndpointId dst) const = 0;

  // Runs every timer and transfer completion up to and including `until`.
  virtual void run_until(Nanos until) = 0;

  // Changes whenever any link or endpoint state changes: a cache key for
  // results that depend only on the network's state.
  virtual std::uint64_t state_version() const = 0;

  // Observation hooks (additive; engines that cannot report keep the
  // defaults). The listener runs synchronously at each transfer event; a
  // transfer's progress is the bytes its sender has pushed so far.
  using TransferListener = std::function<void(const TransferEvent&)>;
  virtual void add_transfer_listener(TransferListener listener) { (void)listener; }
  virtual double transfer_progress(TransferId id) const {
    (void)id;
    return 0;
  }
  // The earliest engine-internal change still scheduled (routing convergence),
  // or the far future: fast-forwarding must not skip over it.
  virtual Nanos next_internal_change() const { return std::numeric_limits<Nanos>::max(); }
  // An operator's drain of a fabric link: ECMP stops choosing it (or, undrained,
  // may choose it again once it is up), connections re-hash at once and those
  // in flight on it move with the bytes they have left. Returns false when the
  // engine cannot route around links.
  virtual bool set_fabric_link_drained(LinkId link, bool drained) {
    (void)link;
    (void)drained;
    return false;
  }
};

}  // namespace gauntlet::sim
