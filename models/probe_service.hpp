#pragma once
// Active probing on the simulated cluster: detectors ask for probes between
// RNIC endpoints and the monitoring agent on the source host runs them over
// the path the network uses at that moment. Each probe is a short train of
// pings; its result (RTT, loss, the components crossed) is published as a
// ProbeResult when the train ends, so detectors see it in a later batch.
//
// The agents also publish a heartbeat every heartbeat interval. A host whose
// agent hangs sends neither heartbeats nor probes; the RNICs still answer
// probes sent to them (the responder runs in the RNIC, not in the agent).
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "models/calibration.hpp"
#include "models/container_overlay.hpp"
#include "sim/network_engine.hpp"
#include "sim/rng.hpp"
#include "sim/telemetry_bus.hpp"

namespace gauntlet::models {

// One cost model serves the simulated prober and the probe planner, so a
// planned round time is what the simulated round takes.
//
// Calibration (the probe.* attributes, models/calibration.hpp; defaults from
// SkeletonHunter's published round times, see harness/probe_plan/probe_plan.hpp):
// a probe is a train of 20 pings 100 ms apart, so it occupies its source
// RNIC's probing slot for 2 s, and an agent runs one probe per RNIC at a time
// so probing never competes with training traffic for the RNIC's queue pairs.
struct ProbeCost {
  sim::Nanos ping_interval = calibration::kProbePingInterval.default_duration();
  int pings_per_probe = calibration::kProbePings.default_count();
  int concurrency = calibration::kProbeConcurrency.default_count();  // probes one RNIC runs at once
  // On the wire, each direction.
  std::uint64_t ping_bytes = static_cast<std::uint64_t>(calibration::kProbePingSize.default_value);
  // Agent timestamping plus the responder RNIC's turnaround, once per round
  // trip; with 4 hops of 1 us each way a cross-spine underlay RTT is 14 us.
  sim::Nanos processing = calibration::kProbeProcessing.default_duration();
  // The containers' vSwitch and offloaded flow tables at both ends, crossed
  // twice per round trip: a healthy overlay RTT is 16 us, as in the seed case.
  sim::Nanos overlay_processing = calibration::kProbeOverlayProcessing.default_duration();

  static ProbeCost from(const sim::Calibration& calibration);
  sim::Nanos probe_duration() const { return ping_interval * pings_per_probe; }
  std::uint64_t probe_bytes() const { return 2 * ping_bytes * static_cast<std::uint64_t>(pings_per_probe); }
};

struct ProbeOrder {
  sim::EndpointId src = 0;
  sim::EndpointId dst = 0;
  bool overlay = false;
  // The UDP source port the pings leave from, which ECMP hashes to a spine
  // (sim/ecmp.hpp); 0: the src-dst connection's own, so the probe crosses
  // the path the pair's traffic takes.
  std::uint16_t source_port = 0;
};

// What one probe saw; rtt is 0 when lost (as in telemetry::ProbeResult).
struct ProbeOutcome {
  sim::Nanos rtt = 0;
  bool lost = false;
  int pings_lost = 0;             // of the train's pings
  std::vector<std::string> path;  // component ids crossed, src side first
};

class ProbeService {
 public:
  ProbeService(sim::NetworkEngine& engine, sim::TelemetryBus& bus, std::uint64_t seed, ProbeCost cost = {});
  ProbeService(const ProbeService&) = delete;
  ProbeService& operator=(const ProbeService&) = delete;

  const ProbeCost& cost() const { return cost_; }

  // Queues probes for `detector`. Each source RNIC runs `concurrency` probes
  // at a time, in request order; a probe whose source agent is down when its
  // turn comes is not sent.
  void submit(const std::string& detector, const std::vector<ProbeOrder>& orders);

  // Packet loss of a component (link or h<N>.nic<K>.ft) during [from, to);
  // overlapping windows compose as independent losses.
  void add_loss(const std::string& component, sim::Nanos from, sim::Nanos to, double rate);
  // The monitoring agent of `host` is silent during [from, to).
  void add_agent_down(int host, sim::Nanos from, sim::Nanos to);
  // The containers' virtual functions and vSwitch rules the overlay runs
  // through. An overlay probe leaves from the VF of the container on its
  // source RNIC (none there: the probe is not sent) and is addressed to the
  // VF on its destination RNIC (none there: the source vSwitch has nowhere
  // to send it and it is lost). Unset, every RNIC is taken to carry one.
  void set_overlay(const OverlayDirectory* overlay) { overlay_ = overlay; }
  // Where a probe reads the queueing delay it meets on a link: by default
  // the engine's own queues (none on the flow engine, whose fabric counters
  // know the delay its load causes instead).
  using QueueingDelay = std::function<sim::Nanos(sim::LinkId)>;
  void set_queueing_delay(QueueingDelay delay) { queueing_delay_ = std::move(delay); }
  // The simulation never runs past `horizon`: a probe whose turn comes later
  // is never sent, so it is not kept. A round of every RNIC pair under each
  // leaf queues more probes than the RNICs' slots run in a round, and the
  // backlog beyond the end held a probe order per pair per round.
  void set_horizon(sim::Nanos horizon) { horizon_ = horizon; }
  // Publishes a heartbeat of every live agent every `interval` until `until`.
  void start_heartbeats(sim::Nanos interval, sim::Nanos until);

  bool agent_up(int host, sim::Nanos at) const;

  // The probe as it would run now, drawing loss from `rng`.
  ProbeOutcome evaluate(const ProbeOrder& order, sim::Rng& rng) const;

  long long probes_sent(const std::string& detector) const;
  long long probe_bytes(const std::string& detector) const;

 private:
  struct Window {
    sim::Nanos from = 0;
    sim::Nanos to = 0;
    double rate = 0;
  };
  // A wave holds up to one probe per RNIC (a million at 16,384 GPUs), and
  // the backlog many waves: the detector is an index into detectors_.
  struct Queued {
    ProbeOrder order;
    std::uint32_t detector = 0;
  };
  // What a probe crossed, src side first: a link, or an endpoint's flow table.
  struct Hop {
    int id = 0;
    bool flow_table = false;
  };
  // A probe's result until its train ends: names are written only then,
  // straight into the batch that carries them. A wave's hops share one
  // vector (a pingmesh wave holds thousands of probes).
  struct Finished {
    std::size_t queued = 0;  // into the wave's orders
    sim::Nanos rtt = 0;
    bool lost = false;
    int pings_lost = 0;
    std::size_t hops_begin = 0, hops_end = 0;  // into the wave's hops
  };
  struct WaveResults {
    std::vector<Finished> probes;
    std::vector<Hop> hops;
  };

  // evaluate() in ids, appending the hops crossed to `hops` (the caller
  // marks where they end in `out`); the loss windows are looked up by id too.
  void evaluate_hops(const ProbeOrder& order, sim::Rng& rng, Finished* out, std::vector<Hop>* hops) const;
  double hop_loss(const Hop& hop, sim::Nanos at) const;
  // How many of a lost train's pings were lost, each lost with probability
  // `ping_loss`: at least one.
  int pings_lost(double ping_loss) const;
  const std::string& hop_name(const Hop& hop) const;
  // Into detectors_; detectors_.size() for one that never submitted.
  std::uint32_t detector_index(const std::string& detector) const;
  const std::string& nic_name(sim::EndpointId endpoint) const;
  void run_wave(sim::Nanos at);
  void heartbeat(sim::Nanos interval, sim::Nanos until);

  sim::NetworkEngine& engine_;
  sim::TelemetryBus& bus_;
  sim::Rng rng_;
  // Draws the count of a lost train's lost pings; a stream of its own keeps
  // rng_'s draws (which trains are lost) as they were.
  mutable sim::Rng pings_rng_;
  ProbeCost cost_;
  const OverlayDirectory* overlay_ = nullptr;
  QueueingDelay queueing_delay_;
  // Loss windows by what probes cross: links, and endpoints' flow tables.
  std::map<int, std::vector<Window>> link_loss_, flow_table_loss_;
  // Names as probes report them, made once each.
  mutable std::vector<std::string> link_names_, nic_names_, flow_table_names_;
  std::map<int, std::vector<Window>> agent_down_;    // by host
  std::vector<std::vector<sim::Nanos>> slot_free_;   // per endpoint, per concurrent slot
  std::map<sim::Nanos, std::vector<Queued>> waves_;  // probes by send time
  sim::Nanos horizon_ = std::numeric_limits<sim::Nanos>::max();
  std::vector<std::string> detectors_;  // those that submitted, in order of their first submission
  std::vector<long long> sent_;         // by index into detectors_
};

}  // namespace gauntlet::models
