#pragma once
// The narrow interface through which models use a network engine: time,
// timers, transfers between RNIC endpoints, and state changes of links and
// endpoints. The flow backend (SimGrid) implements it; a packet-level backend
// can implement the same calls.
//
// Beyond those calls an engine may offer capabilities that make long runs
// cheap; one that lacks a capability keeps the default, which declines, and
// models then simulate everything in place:
// - simulate_apart: the outcome of a set of transfers on an idle copy of the
//   network, computed without disturbing this one;
// - replays(): accounting for transfer sets whose outcome a model replays
//   from an earlier simulation instead of simulating them again;
// - packet_faults(): faults acted out on packets (loss as corrupted frames,
//   congestion as real background traffic, PFC storms);
// - packet_counters(): switch port and RNIC transport counters counted off
//   the packets the engine simulated.
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace gauntlet::sim {

class PacketCounterSource;  // sim/packet/packet_engine.hpp

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

// One transfer of a set started together (see simulate_apart, ReplayedSet).
struct TransferRequest {
  EndpointId src = 0;
  EndpointId dst = 0;
  double bytes = 0;
};

// A set of transfers that started together at `start` and whose outcome was
// replayed, not simulated: `delivered[i]` is when transfer i's last byte
// arrived. Its transfers never reach the transfer listeners. `end` is when
// the replayed work is over, its last delivery or later (the set a model
// replays may hold work off the network too).
struct ReplayedSet {
  Nanos start = 0;
  Nanos end = 0;
  std::vector<TransferRequest> transfers;
  std::vector<Nanos> delivered;
};

// Keeps what an engine that replays must know: its transfers in flight, when
// the latest replayed set ends, and who wants to be told of each (telemetry
// that counts traffic: the replayed transfers stand for traffic the network
// carried). Such an engine owns one; observers are scoped by the Observation
// they get.
class ReplayLedger {
 public:
  using Observer = std::function<void(const ReplayedSet&)>;

  // Removes its observer when it goes out of scope; the ledger must outlive it.
  class [[nodiscard]] Observation {
   public:
    Observation() = default;
    Observation(Observation&& other) noexcept;
    Observation& operator=(Observation&& other) noexcept;
    Observation(const Observation&) = delete;
    Observation& operator=(const Observation&) = delete;
    ~Observation();

   private:
    friend class ReplayLedger;
    Observation(ReplayLedger* ledger, std::uint64_t id) : ledger_(ledger), id_(id) {}
    ReplayLedger* ledger_ = nullptr;
    std::uint64_t id_ = 0;
  };

  Observation observe(Observer observer);
  // Records a replayed set and tells every observer, in the order they came.
  void record(const ReplayedSet& set);
  // The end of the latest replayed set (the far past before any): the
  // network counts as carrying that traffic until then.
  Nanos busy_until() const { return busy_until_; }

  // The owning engine reports every transfer it starts and every delivery
  // (the last byte's arrival, latency included): a set may replay only on an
  // idle network, and a simulated set's outcome is its own only if no other
  // transfer started beside it.
  void transfer_started();
  void transfer_delivered();
  std::uint64_t transfers_started() const { return started_; }
  std::uint64_t transfers_undelivered() const { return undelivered_; }

 private:
  std::vector<std::pair<std::uint64_t, Observer>> observers_;
  std::uint64_t next_id_ = 0;
  Nanos busy_until_ = std::numeric_limits<Nanos>::min();
  std::uint64_t started_ = 0;
  std::uint64_t undelivered_ = 0;
};

// Capability: faults only a packet-level engine acts out. Each change is
// named by the fault that causes it, so overlapping faults on one link
// compose (losses as independent drops, each load a share of the capacity
// the others leave)
// and end one by one.
class PacketFaults {
 public:
  virtual ~PacketFaults() = default;
  // Frames crossing the link, either way, are corrupted by random bit errors
  // and dropped by the receiving port as CRC errors: `rate` is a full
  // (MTU-sized) data frame's loss, shorter frames lose 1 - (1 - BER)^bits
  // for the bit error rate it implies; 0 ends it.
  virtual void set_link_loss(LinkId link, const std::string& cause, double rate) = 0;
  // Other tenants' traffic on the link, both ways, as a fraction of its line
  // rate, sharing the egress queues with the job's packets; 0 ends it.
  virtual void set_background_load(LinkId link, const std::string& cause, double load) = 0;
  // A port that keeps sending PAUSE frames until `until`: the RNIC's port
  // toward its leaf, or the leaf's port on a link toward the spine (fabric
  // link) or the RNIC (host link).
  virtual void start_pfc_storm_from_endpoint(EndpointId endpoint, Nanos until) = 0;
  virtual void start_pfc_storm_from_leaf(LinkId link, Nanos until) = 0;
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
  // The links a flow from src to dst leaving from UDP source port
  // `source_port` crosses now (ECMP hashes on it; sim/ecmp.hpp). An engine
  // that does not hash on ports routes it as the connection.
  virtual std::vector<LinkId> route_from_port(EndpointId src, EndpointId dst, std::uint16_t source_port) const {
    (void)source_port;
    return route(src, dst);
  }
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

  // Capability: the outcome of `transfers`, all started at once on an idle
  // copy of this network in its present state, computed apart so that this
  // engine's clock, timers and transfers stay as they are. Per transfer: its
  // last byte's arrival after the start. Nothing when the engine cannot (the
  // default) or some transfer would still be undelivered `limit` after the
  // start. Errors in the computation propagate, typed.
  virtual std::optional<std::vector<Nanos>> simulate_apart(const std::vector<TransferRequest>& transfers, Nanos limit) {
    (void)transfers;
    (void)limit;
    return std::nullopt;
  }

  // Capability: packet-level faults. Null (the default) when the engine
  // models no packets; a fault type that needs them is then refused before
  // the run, and the others act through link and endpoint states.
  virtual PacketFaults* packet_faults() { return nullptr; }

  // Capability: packet counters. `source` is null (the default) when the
  // engine counts no packets; `every_transfer` says whether they count all
  // the network's traffic (every transfer runs as packets) or only the
  // transfers the engine chose to run as packets (the rest is flow-level,
  // and its counters must come from a model of the flows).
  struct PacketCounting {
    const PacketCounterSource* source = nullptr;
    bool every_transfer = false;
  };
  virtual PacketCounting packet_counters() const { return {}; }

  // Mean queueing delay a packet meets now on the link, both ways averaged
  // (what a ping and its reply wait in the two egress queues). An engine
  // without queues reports 0.
  virtual Nanos queueing_delay(LinkId link) const {
    (void)link;
    return 0;
  }

  // Capability: replaying transfer sets. Null (the default) when the engine
  // must see every transfer; models then never replay.
  virtual ReplayLedger* replays() { return nullptr; }
  // What a set's outcome on an idle network depends on beyond its routes
  // and the states of its links and endpoints (packet faults, say), as a
  // value that differs whenever that does; a recorded outcome replays only
  // under the salt it was recorded with.
  virtual std::uint64_t outcome_salt() const { return 0; }

  // Tells `observer` of every set replayed on this engine until the returned
  // Observation ends; does nothing on an engine that does not replay.
  ReplayLedger::Observation observe_replays(ReplayLedger::Observer observer) {
    ReplayLedger* ledger = replays();
    return ledger ? ledger->observe(std::move(observer)) : ReplayLedger::Observation();
  }
};

}  // namespace gauntlet::sim
