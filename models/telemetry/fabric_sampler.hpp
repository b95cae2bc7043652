#pragma once
// Per-second switch port counters, RNIC CNP counts and go-back-N counters
// of a simulated run, from the traffic ledger through the network
// calibration table (fabric_counters).
//
// Counters as rates. Each time the job completes simulated iterations, the
// ledger's flows over their span are measured once (bytes, queue, ECN marks
// per port; CNPs per sending RNIC) and turned into per-second rates. Every
// sample second then reports those rates, until the next measured iteration
// replaces them. An iteration fast-forwarded in a steady stretch is by
// construction identical to the last simulated one, so a steady stretch costs
// no measurement at all and its counters are exactly those of full
// simulation. Counters lag the traffic by at most one iteration, as the
// RNIC byte counters of the hardware sampler do. While the job does not
// iterate, only congestion faults' background traffic is counted, measured
// over each second.
//
// A flow set replayed without engine transfers reaches the ledger through
// add_replayed, each flow at its average rate over its life. Should none
// reach it, the rates of a set seen before are looked up by a key of
// everything they depend on: the links' and RNICs' states and who sends how
// much to whom in the iteration's collectives.
//
// Which ports are published: a port that carried traffic or background load
// in the measured span (every other port is idle: zero bytes, empty queue,
// no marks). A port that falls idle publishes one zero record, then nothing.
// The first sample after a change is a plain PortCounters record; unchanged
// repeats are gathered into SteadySamples blocks closed at a change and at
// every multiple of `hold`, as the hardware sampler does for its samples.
// RNIC transport counters (retransmissions, NAKs, CNPs) are published the
// same way: a plain record at a change, repeats in blocks.
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/telemetry/fabric_counters.hpp"
#include "models/telemetry/flow_records.hpp"
#include "models/telemetry/telemetry_effects.hpp"
#include "models/telemetry/traffic_ledger.hpp"
#include "sim/network_engine.hpp"
#include "sim/proto/telemetry.pb.h"

namespace gauntlet::models {

struct FabricSamplerParams {
  // Longer than the hardware sampler's: a cluster has more ports than GPUs,
  // and a change is published at once anyway; blocks only confirm repeats.
  sim::Nanos hold = 10 * sim::kMinute;
  FabricCounterParams counters;
  // Also measure each connection's rates, for flow records.
  bool flows = false;
};

class FabricSampler {
 public:
  FabricSampler(sim::NetworkEngine& engine, const TelemetryEffects& effects, FabricSamplerParams params = {});
  FabricSampler(const FabricSampler&) = delete;
  FabricSampler& operator=(const FabricSampler&) = delete;

  // Measures the iterations the job completed in `batch` (plain iteration
  // records; steady runs reuse the rates of the iteration they replay).
  void observe_traffic(const telemetry::Batch& batch);
  // A transfer replayed instead of simulated (see TrafficLedger::add_replayed).
  void add_replayed(sim::EndpointId src, sim::EndpointId dst, sim::Nanos from, sim::Nanos to, double bytes,
                    int sharing) {
    ledger_.add_replayed(src, dst, from, to, bytes, sharing);
  }
  // Settles the port rates of the second ending at `at` (sample() does it
  // too); before it publishes them, host_link_bytes_per_second reads them.
  void measure_second(sim::Nanos at, bool traffic_flowing);
  // Bytes the RNIC's host link carries in the second measured last, toward
  // the leaf (upward) or toward the RNIC: what its port counters publish, so
  // the RNIC's own counters can count the same bytes.
  double host_link_bytes_per_second(sim::EndpointId endpoint, bool upward) const;
  // Publishes port counters for the second ending at `at`.
  void sample(sim::Nanos at, bool traffic_flowing, telemetry::Batch* out);
  // Closes every open repeat block into `out` (end of the run).
  void flush(telemetry::Batch* out);

  // Each connection's rates in the second measure_second settled last (none
  // while the job does not iterate), by (src, dst); empty unless
  // FabricSamplerParams::flows.
  const std::vector<FlowRate>& flow_rates() const;
  // CNPs per second the RNIC handles as a sender now.
  double cnp_rate(sim::EndpointId endpoint) const;
  // Mean queueing delay the last measured iterations left on the link, both
  // ways averaged (what a probe's ping and reply wait), as the packet
  // engine reports it.
  sim::Nanos queueing_delay(sim::LinkId link) const;
  // Changes whenever any rate changes.
  std::uint64_t version() const { return version_; }
  std::uint64_t published_bytes() const { return published_bytes_; }

 private:
  struct PortRate {
    double tx_bytes = 0, ecn_marked = 0, queue_bytes = 0;  // per second; queue as occupancy
    double crc_errors = 0;
    double fec_corrected = 0, fec_uncorrectable = 0, fec_symbol_errors = 0;
    bool operator==(const PortRate&) const = default;
  };
  struct PortValue {
    std::uint64_t tx_bytes = 0, tx_packets = 0, ecn_marked = 0, crc_errors = 0;
    std::uint64_t fec_corrected = 0, fec_uncorrectable = 0, fec_symbol_errors = 0;
    double queue_depth = 0;
    bool link_up = true;
    bool operator==(const PortValue&) const = default;
    bool idle() const { return tx_bytes == 0 && ecn_marked == 0 && fec_corrected == 0 && fec_uncorrectable == 0; }
  };
  // A repeating port's block runs from repeat_from to the latest sample: a
  // port either repeats or changes at every sample.
  struct Port {
    PortValue last;
    sim::Nanos repeat_from = -1;
  };

  // An RNIC's transport counters per second: go-back-N's on a lossy path,
  // the notification point's under congestion.
  struct TransportRate {
    double retransmitted = 0, naks_sent = 0, naks_received = 0;
    double out_of_sequence = 0, cnp_sent = 0, ecn_marked_received = 0;
    bool operator==(const TransportRate&) const = default;
  };
  struct TransportValue {
    std::uint64_t retransmitted = 0, naks_sent = 0, naks_received = 0, out_of_sequence = 0;
    std::uint64_t cnp_sent = 0, ecn_marked_received = 0, cnp_handled = 0;
    bool operator==(const TransportValue&) const = default;
  };
  struct Transport {
    TransportValue last;
    sim::Nanos repeat_from = -1;
  };
  struct Rates {
    std::map<int, PortRate> ports;                       // by directed link
    std::vector<double> cnp;                             // per endpoint
    std::map<sim::EndpointId, TransportRate> transport;  // endpoints with any
    std::vector<FlowRate> flows;                         // by (src, dst), when measured
  };
  void write_transport(sim::Nanos at, bool flowing, telemetry::Batch* out);
  TransportValue transport_value(sim::EndpointId endpoint, const TransportRate& rate) const;
  void write_transport_record(telemetry::Record* r, sim::EndpointId endpoint, const TransportValue& v,
                              sim::Nanos at) const;
  void close_transport(sim::EndpointId endpoint, Transport& transport, sim::Nanos until);
  Rates rates_of(const FabricWindow& window, double seconds) const;
  static PortRate port_rate(const PortWindow& window, double seconds);
  void set_rates(Rates rates);
  std::uint64_t traffic_key(const telemetry::Batch& batch) const;
  PortValue value_of(int direction, bool flowing) const;
  // Points each direction's slot of `lookup` at its rate in `rates`, or null.
  void index_rates(const std::map<int, PortRate>& rates, std::vector<const PortRate*>* lookup) const;
  void write_record(telemetry::Record* r, int direction, const PortValue& v, sim::Nanos at) const;
  void close(int direction, Port& port, sim::Nanos until);
  const std::string& link_name(sim::LinkId link) const;
  void emit_closed(telemetry::Batch* out);

  sim::NetworkEngine& engine_;
  const TelemetryEffects& effects_;
  FabricSamplerParams params_;
  TrafficLedger ledger_;

  std::map<int, PortRate> iteration_rates_;  // by directed link, from the last measured iterations
  std::map<int, PortRate> idle_rates_;       // background only, for the second just sampled
  // The two above by direction: the RNIC sampler reads every host link's
  // rate each second it samples.
  std::vector<const PortRate*> iteration_lookup_, idle_lookup_;
  std::vector<double> cnp_rate_;  // per endpoint
  std::map<sim::EndpointId, TransportRate> transport_rates_;
  std::vector<FlowRate> flow_rates_;
  // RNICs whose transport counters count something, as last published: one
  // that falls quiet publishes a zero record, then nothing.
  std::map<sim::EndpointId, Transport> transports_;
  bool transports_repeating_ = false;  // every published RNIC has an open block
  // queueing_delay per link off iteration_rates_, derived at the first probe
  // after they change: a pingmesh round asks it of a quarter of a million
  // probes' links.
  mutable std::vector<sim::Nanos> queueing_delays_;
  mutable bool queueing_delays_stale_ = true;
  std::deque<std::pair<std::uint64_t, Rates>> known_;  // recent keys and their rates
  std::uint64_t version_ = 0;
  bool measured_ = false;        // rates changed since the last sample
  sim::Nanos measured_at_ = -1;  // the second measure_second settled last
  bool flowing_now_ = false;     // ... whether the job iterated in it
  bool quiet_now_ = false;       // ... and whether nothing changed since the one before

  std::map<int, Port> ports_;   // published ports, by directed link
  bool all_repeating_ = false;  // every published port has an open block
  mutable std::unordered_map<sim::LinkId, std::string> names_;
  // Closed repeat blocks by span: (direction or RNIC, value, first repeat)
  // of each port and RNIC, written straight into the outgoing batch when
  // emitted.
  struct ClosedPort {
    int direction = 0;
    PortValue value;
    sim::Nanos from = 0;
  };
  struct ClosedTransport {
    sim::EndpointId endpoint = 0;
    TransportValue value;
    sim::Nanos from = 0;
  };
  struct ClosedSpan {
    std::vector<ClosedPort> ports;
    std::vector<ClosedTransport> transports;
  };
  std::map<std::pair<sim::Nanos, sim::Nanos>, ClosedSpan> closed_;
  sim::Nanos previous_ = -1;
  std::uint64_t previous_engine_version_ = 0;
  bool previous_flowing_ = false;
  std::uint64_t published_bytes_ = 0;
};

}  // namespace gauntlet::models
