#pragma once
// The flow-level network engine: SimGrid 3.32 shares link bandwidth among
// concurrent transfers (max-min fairness, recomputed whenever a transfer
// starts or ends or a link changes); routes come from our own ECMP router
// through a custom SimGrid routing zone, so the spine-leaf platform is built
// in code and connections keep their path.
//
// SimGrid keeps one engine per process, so one FlowEngine may exist per
// process; run independent simulations in separate processes (see
// sim/isolated_run.hpp).
//
// Capabilities (see NetworkEngine): it replays, it simulates a set of
// transfers apart in a forked copy of itself, one sharing group at a time,
// and it draws the retransmission-timeout stalls of transfers crossing a
// lossy link.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/ecmp.hpp"
#include "sim/network_engine.hpp"
#include "sim/transport_stalls.hpp"

namespace gauntlet::sim {

class FlowEngine final : public NetworkEngine, public TransportStalls {
 public:
  FlowEngine(const Topology& topology, std::uint64_t seed);
  ~FlowEngine() override;
  FlowEngine(const FlowEngine&) = delete;
  FlowEngine& operator=(const FlowEngine&) = delete;

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
  std::optional<std::vector<Nanos>> simulate_apart(const std::vector<TransferRequest>& transfers, Nanos limit) override;
  ReplayLedger* replays() override;
  void set_link_stalls(LinkId link, const std::string& cause, const TransferStalls& stalls) override;
  bool draws_stalls() const override;
  Nanos draw_stall(EndpointId src, EndpointId dst, double bytes) override;

  // Routing convergence: when a fabric link changes between up and down, the
  // ECMP router learns of it this much later (BFD detection plus routing
  // update; 1 s by default, 0 = at once). Until then new connections keep
  // hashing onto a down link and stall there; once routing has converged,
  // connections in flight on it move to another spine with the bytes they
  // have left, as a switch's rehash moves an existing queue pair's packets.
  void set_convergence_delay(Nanos delay);
  Nanos convergence_delay() const;

  // Routing's view of fabric links (what has converged), separate from the
  // physical link state.
  EcmpRouter& router();

  struct Impl;

 private:
  // Forgets every pending timer, for a forked copy of the engine that goes
  // on simulating on its own: none of the parent's events may fire in it.
  void drop_timers();
  // The transfers in groups that share no link direction (nor flow table
  // direction): max-min sharing couples only transfers that share one, so
  // groups simulated one after another end as they would side by side.
  std::vector<std::vector<std::size_t>> sharing_groups(const std::vector<TransferRequest>& transfers) const;

  std::unique_ptr<Impl> impl_;
};

}  // namespace gauntlet::sim
