#pragma once
// The simulated telemetry as the exporters operators run would show it to
// Prometheus, scraped every scrape interval:
//  * GPUs as NVIDIA's DCGM exporter names them: DCGM_FI_DEV_SM_CLOCK (MHz),
//    DCGM_FI_DEV_GPU_TEMP (C), DCGM_FI_DEV_POWER_USAGE (W),
//    DCGM_FI_DEV_GPU_UTIL (%), labels gpu, device (nvidiaK), Hostname;
//  * RNICs as node exporter's InfiniBand collector names them (RoCE RNICs
//    show up there too): node_infiniband_port_data_{transmitted,received}_bytes_total,
//    node_infiniband_port_packets_{transmitted,received}_total,
//    node_infiniband_state_id (4 active, 1 down), and the mlx5 hardware
//    counter of CNPs handled as a sender, node_infiniband_rp_cnp_handled_total;
//    labels device (mlx5_K), port, instance (the host);
//  * switch ports as the SNMP exporter's IF-MIB module names them:
//    ifHCOutOctets, ifHCOutUcastPkts, ifOperStatus (1 up, 2 down), plus
//    the ECN marks and queue depth that switches export beside them
//    (switch_port_ecn_marked_packets_total, switch_port_queue_depth_bytes);
//    labels instance (the switch), ifName (the link), direction.
// Every series also carries `component`, the gauntlet component id it
// describes (h5.gpu2, h5.nic3, leaf3~spine1), so that a rule's alert names
// what it is about.
//
// Values are kept run-length encoded on the scrape grid (a steady stretch
// is one segment, a counter growing at a steady rate too), so a month costs
// what its changes cost.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/proto/telemetry.pb.h"
#include "sim/time.hpp"

namespace gauntlet::harness {

// `count` values start, start + step, ..., on consecutive scrapes.
struct SeriesSegment {
  double start = 0;
  double step = 0;
  std::uint64_t count = 0;
};

struct Series {
  std::string metric;
  std::string labels;                   // rendered: a="x",b="y" (sorted by name)
  std::string type;                     // gauge | counter
  std::vector<SeriesSegment> segments;  // from the first scrape on
  std::uint64_t first_scrape = 0;       // index of its first value
};

class ExporterSeries {
 public:
  explicit ExporterSeries(sim::Nanos scrape_interval = 15 * sim::kSecond) : interval_(scrape_interval) {}

  // Every sample in the batch, steady blocks expanded onto the scrape grid.
  void observe(const telemetry::Batch& batch);
  // Series in a stable order (by metric, then labels); values up to `until`.
  std::vector<Series> series(sim::Nanos until) const;
  sim::Nanos scrape_interval() const { return interval_; }

 private:
  struct Sample {
    sim::Nanos time = 0;
    double value = 0;
    bool cumulative = false;  // the amount of one sample period, to be summed
  };
  struct Key {
    std::string metric, labels;
    auto operator<=>(const Key&) const = default;
  };
  struct Track {
    std::string type;
    std::vector<Sample> samples;  // in time order
  };
  void add(const std::string& metric, const std::string& labels, const std::string& type, sim::Nanos time,
           double value);
  void record(const telemetry::Record& record, sim::Nanos time);

  sim::Nanos interval_;
  std::map<Key, Track> tracks_;
};

// A Prometheus label set from pairs, sorted by name and escaped.
std::string render_labels(std::map<std::string, std::string> labels);

}  // namespace gauntlet::harness
