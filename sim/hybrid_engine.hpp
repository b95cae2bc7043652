#pragma once
// The hybrid network engine: the flow engine (sim/flow/) carries every
// transfer except those whose route crosses a link under a packet-level
// fault when they start: a lossy link, background traffic, a PFC storm.
// Those transfers, all the ones started at one instant together (a
// collective's flows), form a batch that is simulated packet by packet on a
// fabric built of only the links they cross (sim/packet/), with the faults
// and the link and flow-table states of that instant. Their deliveries come
// back to the flow engine's clock as timers, and the batches' port and RNIC
// counters add up in the packet engine's schema. With no packet fault in
// force the engine is the flow engine, result for result, replays included;
// each batch moves the state version, since its outcome is a draw of its
// own that a job must not repeat as a steady state.
//
// While a PFC storm lasts, the links into the switch it pauses count as
// faulty too, so the transfers it blocks head-of-line share a batch with
// the stormer's own.
//
// What a batch does not see, as an outcome simulated apart does not: the
// flow-level transfers sharing its links (nor do they see it), and changes
// of the network after its start. A transfer whose route is down or whose
// RNIC is, stays on the flow engine, which models stalls and rerouting; one
// a batch has not delivered after `batch_horizon` goes on there with the
// bytes its receiver had not acknowledged, or in a new batch while a storm
// still holds its route (the flow engine knows no storms).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/flow/flow_engine.hpp"
#include "sim/network_engine.hpp"
#include "sim/packet/packet_engine.hpp"
#include "sim/packet/roce_params.hpp"

namespace gauntlet::sim {

struct HybridParams {
  RoceParams roce;
  Nanos batch_horizon = kSecond;
};

class HybridEngine final : public NetworkEngine, public PacketFaults, public PacketCounterSource {
 public:
  HybridEngine(const Topology& topology, std::uint64_t seed, const HybridParams& params = {});
  ~HybridEngine() override;
  HybridEngine(const HybridEngine&) = delete;
  HybridEngine& operator=(const HybridEngine&) = delete;

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
  // While a packet fault lasts, its transfers go to a batch and the others
  // to the flow engine's simulation apart.
  std::optional<std::vector<Nanos>> simulate_apart(const std::vector<TransferRequest>& transfers, Nanos limit) override;
  ReplayLedger* replays() override;
  std::uint64_t outcome_salt() const override;
  PacketFaults* packet_faults() override { return this; }
  // Counted off the packet batches only: the flows between them are not packets.
  PacketCounting packet_counters() const override { return {this, false}; }

  void set_link_loss(LinkId link, const std::string& cause, double rate) override;
  void set_background_load(LinkId link, const std::string& cause, double load) override;
  void start_pfc_storm_from_endpoint(EndpointId endpoint, Nanos until) override;
  void start_pfc_storm_from_leaf(LinkId link, Nanos until) override;

  // Whether a transfer started now from src to dst goes to a packet batch.
  bool at_packet_level(EndpointId src, EndpointId dst) const;
  // Whether some packet fault is in force now.
  bool packet_faults_active() const;

  // Totals over every batch so far (see PacketEngine::port_counters).
  PacketPortCounters port_counters(LinkId link, bool upward) const override;
  PacketRnicCounters rnic_counters(EndpointId endpoint) const override;
  std::uint64_t packet_transfers() const;  // transfers simulated in batches
  std::uint64_t packet_batches() const;
  std::uint64_t packet_hops() const;  // frames carried over one link hop, all batches

  FlowEngine& flow();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gauntlet::sim
