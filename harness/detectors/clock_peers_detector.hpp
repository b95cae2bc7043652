#pragma once
// `clock_peers`: the naive fail-slow rule. A busy GPU whose SM clock sits
// more than `margin` below the median clock of the busy GPUs sampled with
// it names the GPU (kind fail_slow), once per crossing. On identical GPUs
// it is exact; on a fleet whose healthy GPUs differ (SC'22's spread, power
// capping, slow machines) its margin trades misses for false alerts.
#include <string>
#include <unordered_map>
#include <vector>

#include "harness/detectors/detector.hpp"
#include "harness/detectors/registry.hpp"

namespace gauntlet::harness {

struct ClockPeersConfig {
  double margin = 0.05;  // fraction below the busy peers' median clock
};

class ClockPeersDetector : public Detector {
 public:
  // Its name, summary, parameters and how to make one: its registry entry.
  static DetectorInfo info();
  static constexpr const char* kName = "clock_peers";
  explicit ClockPeersDetector(ClockPeersConfig config) : config_(config) {}
  static ClockPeersConfig config_from(const DetectorParams& params);

  void observe(const telemetry::Batch& batch) override;
  bool reads_heartbeats() const override { return false; }

 private:
  struct Gpu {
    double clock_mhz = 0;
    bool busy = false;
    bool low = false;  // alerted, not yet back within the margin
  };
  void check(double now_s);

  ClockPeersConfig config_;
  std::unordered_map<std::string, std::size_t> index_;  // a GPU's id -> its slot
  std::vector<std::string> names_;
  std::vector<Gpu> gpus_;
};

}  // namespace gauntlet::harness
