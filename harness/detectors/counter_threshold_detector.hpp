#pragma once
// `counter_threshold`: the naive rule operators write first. A switch port
// counting more than `crc_per_second` CRC (FCS) errors in a sample names its
// link; a GPU whose XID gauge moves to a nonzero value names the GPU (when
// `xid` is true). One alert per crossing: a component alerts again only
// after a sample back under the threshold. It knows nothing of what is
// normal: a link corrupting at a healthy fabric's background rate, or an
// application's XID, trips it as readily as a fault does.
#include <string>
#include <unordered_map>

#include "harness/detectors/detector.hpp"
#include "harness/detectors/registry.hpp"

namespace gauntlet::harness {

struct CounterThresholdConfig {
  double crc_per_second = 0;  // alert above this many CRC errors a second
  bool xid = true;            // alert on every new nonzero XID
};

class CounterThresholdDetector : public Detector {
 public:
  // Its name, summary, parameters and how to make one: its registry entry.
  static DetectorInfo info();
  static constexpr const char* kName = "counter_threshold";
  explicit CounterThresholdDetector(CounterThresholdConfig config) : config_(config) {}
  static CounterThresholdConfig config_from(const DetectorParams& params);

  void observe(const telemetry::Batch& batch) override;
  bool reads_heartbeats() const override { return false; }

 private:
  void port(const telemetry::PortCounters& p);
  void gpu(const telemetry::GpuSample& g);

  CounterThresholdConfig config_;
  struct Link {
    bool up = false, down = false;  // each direction above the threshold now
  };
  std::unordered_map<std::string, Link> over_;          // by link
  std::unordered_map<std::string, std::uint32_t> xid_;  // a GPU's last XID seen
};

}  // namespace gauntlet::harness
