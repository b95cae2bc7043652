#pragma once
// IPFIX-style flow records of the job's RoCE traffic, metered by each
// sending RNIC (docs/protocol.md, "Flow records").
//
// A flow is a 5-tuple: the two RNICs' underlay addresses, UDP, destination
// port 4791 and the source port the RNIC gives the connection's queue pairs
// (sim/ecmp.hpp), which is what ECMP hashes on, so all of a connection's
// bytes cross one path. Each second the exporter meters every connection's
// bytes, packets and go-back-N resends at the rates the fabric counters
// measured (the same rates the RNIC's byte counters publish), after 1:N
// random packet sampling: each of the second's packets is kept with
// probability 1/N and the kept counts are scaled by N. A cache entry opens at
// a flow's first sampled packet and is exported (as IPFIX's metering process
// does, RFC 5470 section 5.1.1) when the flow has sent nothing for the idle
// timeout, when the active timeout has passed since the entry opened (a new
// entry then opens for the next second it sends), or when the run ends.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "models/calibration.hpp"
#include "models/container_overlay.hpp"
#include "models/telemetry/flow_calibration.hpp"
#include "sim/proto/telemetry.pb.h"
#include "sim/rng.hpp"
#include "sim/topology.hpp"

namespace gauntlet::models {

// One connection's rates, measured over the last simulated iteration.
struct FlowRate {
  sim::EndpointId src = 0;
  sim::EndpointId dst = 0;
  std::vector<int> directions;  // its route, as directed links (traffic_ledger.hpp)
  double bytes_per_second = 0;
  double retransmitted_per_second = 0;  // packets
  bool operator==(const FlowRate&) const = default;
};

struct FlowRecordParams {
  sim::Nanos active_timeout = calibration::kFlowActiveTimeout.default_duration();
  sim::Nanos idle_timeout = calibration::kFlowIdleTimeout.default_duration();
  std::uint64_t sampling_interval = 1;  // N of 1:N
  double mtu_bytes = calibration::kRnicMtu.default_value;
  std::uint64_t seed = 0;

  static FlowRecordParams from(const sim::Calibration& calibration, std::uint64_t seed);
};

// IPFIX flowEndReason values (RFC 7011's information element 136).
enum class FlowEndReason : std::uint32_t { idle_timeout = 1, active_timeout = 2, forced_end = 4 };

// The underlay IPv4 address of an RNIC: 10.<host / 256>.<host % 256>.<nic + 1>.
std::string underlay_address(const sim::Topology& topology, sim::EndpointId endpoint);

class FlowRecordExporter {
 public:
  FlowRecordExporter(const sim::Topology& topology, FlowRecordParams params);
  FlowRecordExporter(const FlowRecordExporter&) = delete;
  FlowRecordExporter& operator=(const FlowRecordExporter&) = delete;

  // Meters the second ending at `at` (each flow of `flows` sent at its rates
  // through it) and exports the records that time out. `overlay` (may be
  // null) names the containers' overlay addresses.
  void meter(sim::Nanos at, const std::vector<FlowRate>& flows, const OverlayDirectory* overlay, telemetry::Batch* out);
  // Exports every open entry (the run ended at `at`).
  void flush(sim::Nanos at, telemetry::Batch* out);

  std::size_t open_flows() const { return cache_.size(); }
  std::uint64_t published_bytes() const { return published_bytes_; }

 private:
  struct Entry {
    sim::Nanos start = 0;        // the start of the first second metered
    sim::Nanos last_active = 0;  // the end of the last second with sampled packets
    double bytes = 0;
    std::uint64_t packets = 0, retransmitted = 0;
    std::vector<int> directions;
    std::string src_overlay, dst_overlay;
  };
  using Key = std::pair<sim::EndpointId, sim::EndpointId>;

  void export_entry(const Key& key, const Entry& entry, FlowEndReason reason, telemetry::Batch* out);
  // Sampled packets of `packets`, scaled back by N.
  std::uint64_t sampled(std::uint64_t packets);
  const std::string& link_name(sim::LinkId link);
  const std::string& nic_name(sim::EndpointId endpoint);

  const sim::Topology& topology_;
  FlowRecordParams params_;
  sim::Rng rng_;
  std::map<Key, Entry> cache_;
  std::map<sim::LinkId, std::string> link_names_;
  std::map<sim::EndpointId, std::string> nic_names_;
  std::uint64_t published_bytes_ = 0;
};

}  // namespace gauntlet::models
