#pragma once
// The packet-level network engine: every transfer is a RoCEv2 message on a
// queue pair of its sender's RNIC, cut into MTU packets that cross ns-3
// net devices (sim/packet/roce_port.hpp) and shared-buffer switches with
// ECN and PFC (roce_switch.hpp), paced by DCQCN and made reliable by
// go-back-N (rnic.hpp). Faults act on packets: a lossy link corrupts frames,
// a down link drops them, congestion is real background traffic, a PFC
// storm is a port that never stops pausing.
//
// ns-3 keeps one simulator per process, so one PacketEngine may exist at a
// time; independent runs go to separate processes (sim/isolated_run.hpp).
// Routes come from the same ECMP router as the flow engine's, so both
// engines send a connection over the same spine.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/network_engine.hpp"
#include "sim/packet/roce_params.hpp"

namespace gauntlet::sim {

// What one direction of a link has counted (the transmitting side's egress,
// the receiving side's ingress), totals since the engine started.
struct PacketPortCounters {
  std::uint64_t tx_bytes = 0;
  std::uint64_t tx_packets = 0;
  std::uint64_t ecn_marked = 0;
  std::uint64_t pause_sent = 0;      // by the receiving side, toward the transmitter
  std::uint64_t pause_received = 0;  // by the transmitting side
  std::uint64_t drops = 0;           // at the transmitting side's egress
  std::uint64_t crc_errors = 0;      // at the receiving side
  double queue_byte_ns = 0;          // integral of the egress queue's bytes over time
  Nanos paused_ns = 0;               // the data class stopped by PAUSE
  // The transmitting switch's PFC watchdog on this port's lossless queue:
  // storms detected and restored, frames it dropped out of and into the port.
  std::uint64_t pfcwd_detected = 0;
  std::uint64_t pfcwd_restored = 0;
  std::uint64_t pfcwd_tx_dropped = 0;
  std::uint64_t pfcwd_rx_dropped = 0;
};

struct PacketRnicCounters {
  std::uint64_t tx_bytes = 0;
  std::uint64_t rx_bytes = 0;
  std::uint64_t tx_packets = 0;
  std::uint64_t rx_packets = 0;
  std::uint64_t retransmitted_packets = 0;
  std::uint64_t naks_sent = 0;
  std::uint64_t naks_received = 0;
  std::uint64_t out_of_sequence = 0;
  std::uint64_t cnp_sent = 0;
  std::uint64_t cnp_handled = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t qp_errors = 0;
  std::uint64_t ecn_marked_received = 0;
  std::uint64_t pause_storm_errors = 0;  // stalls the NIC's PFC watchdog stopped pausing for
};

// Where packet counters come from: the packet engine, or the hybrid
// engine's batches (sim/hybrid_engine.hpp).
class PacketCounterSource {
 public:
  virtual ~PacketCounterSource() = default;
  virtual const Topology& topology() const = 0;
  virtual const PathState& link_state(LinkId link) const = 0;
  // One direction of a link (upward: RNIC to leaf, leaf to spine).
  virtual PacketPortCounters port_counters(LinkId link, bool upward) const = 0;
  virtual PacketRnicCounters rnic_counters(EndpointId endpoint) const = 0;
};

class PacketEngine final : public NetworkEngine, public PacketFaults, public PacketCounterSource {
 public:
  PacketEngine(const Topology& topology, std::uint64_t seed, const RoceParams& params = {});
  // An engine on part of the cluster (see PacketFabric): per link, whether
  // it exists. Transfers may use built links only; counters of the others
  // stay zero and faults on them do nothing. ECMP hashes with
  // `routing_seed`, so routes can be another engine's of the same cluster.
  PacketEngine(const Topology& topology, std::uint64_t seed, const RoceParams& params,
               const std::vector<char>& footprint, std::uint64_t routing_seed);
  ~PacketEngine() override;
  PacketEngine(const PacketEngine&) = delete;
  PacketEngine& operator=(const PacketEngine&) = delete;

  const Topology& topology() const override;
  Nanos now() const override;
  TimerId schedule_at(Nanos at, TimerCallback callback) override;
  void cancel(TimerId id) override;
  TransferId start_transfer(EndpointId src, EndpointId dst, double bytes, TransferCallback on_done) override;
  void set_link_state(LinkId link, const PathState& state) override;
  void set_endpoint_state(EndpointId endpoint, const PathState& state) override;
  const PathState& link_state(LinkId link) const override;
  const PathState& endpoint_state(EndpointId endpoint) const override;
  std::vector<LinkId> route(EndpointId src, EndpointId dst) const override;
  std::vector<LinkId> route_from_port(EndpointId src, EndpointId dst, std::uint16_t source_port) const override;
  Nanos route_latency(EndpointId src, EndpointId dst) const override;
  void run_until(Nanos until) override;
  std::uint64_t state_version() const override;
  void add_transfer_listener(TransferListener listener) override;
  double transfer_progress(TransferId id) const override;
  Nanos next_internal_change() const override;
  bool set_fabric_link_drained(LinkId link, bool drained) override;

  Nanos queueing_delay(LinkId link) const override;
  PacketFaults* packet_faults() override { return this; }
  PacketCounting packet_counters() const override { return {this, true}; }

  // Packet-level faults (see PacketFaults), in force from now on.
  void set_link_loss(LinkId link, const std::string& cause, double rate) override;
  void set_background_load(LinkId link, const std::string& cause, double load) override;
  void start_pfc_storm_from_endpoint(EndpointId endpoint, Nanos until) override;
  void start_pfc_storm_from_leaf(LinkId link, Nanos until) override;
  // The same for a single cause: the link's whole loss or background load.
  void set_link_loss(LinkId link, double rate) { set_link_loss(link, "", rate); }
  void set_background_load(LinkId link, double load) { set_background_load(link, "", load); }

  // A transfer's queue pair errored (no progress for retry_count x its
  // timeout: IBV_WC_RETRY_EXC_ERR); the transfer never finishes. The run
  // fails the job that owns it, as NCCL aborts on such a completion.
  using QpErrorHandler = std::function<void(EndpointId src, EndpointId dst)>;
  void set_qp_error_handler(QpErrorHandler handler);

  // Routing convergence after a fabric link goes down or comes back (as the
  // flow engine's; 1 s by default).
  void set_convergence_delay(Nanos delay);

  // Counters: one direction of a link (upward: RNIC to leaf, leaf to spine).
  PacketPortCounters port_counters(LinkId link, bool upward) const override;
  PacketRnicCounters rnic_counters(EndpointId endpoint) const override;
  // Bytes per second a transfer's QP may send now (its DCQCN rate), or 0.
  double transfer_rate(TransferId id) const;
  // Payload bytes of a transfer its receiver has acknowledged in order (a
  // long stream's goodput, which transfer_progress overstates under loss:
  // a requester keeps sending past a hole until the NAK reaches it).
  double transfer_acknowledged(TransferId id) const;
  // ns-3 events executed so far, and frames carried over one link hop.
  std::uint64_t events_executed() const;
  std::uint64_t packet_hops() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gauntlet::sim
