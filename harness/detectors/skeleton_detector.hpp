#pragma once
// SkeletonHunter: probes only the traffic skeleton the RNICs' flow tables
// reveal (periodic bursts, skeleton_inference.hpp; container stops retire
// flows early), plus the pairs that make every component on it
// identifiable, one budgeted round every `round`; localizes anomalies
// optimistically, one layer at a time:
//   1. overlay, assuming the underlay healthy: anomalous overlay probes that
//      all touch one RNIC while underlay probes between the same ends are fine
//      name that RNIC's flow table (underlay probes are sent to check);
//   2. underlay, assuming the overlay healthy: links on failed paths that lie
//      on no healthy path, ranked by failed paths sharing them;
//   3. neither: the RNIC boundary of the endpoint most failed probes share.
// A monitoring agent whose heartbeats stop is reported as `monitor` on
// h<N>.agent; the probes it no longer sends are missing, not lost, so a
// silent agent never reads as a network fault.
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "harness/detectors/detector.hpp"
#include "harness/detectors/skeleton_inference.hpp"
#include "harness/probe_plan/probe_plan.hpp"

namespace gauntlet::harness {

class SkeletonDetector : public Detector {
 public:
  struct Config {
    std::string name = "skeleton";  // whose probe results to read
    sim::Nanos round = 30 * sim::kSecond;
    long long budget = 256;         // probes per round
    double rtt_factor = 2.0;        // anomalous above baseline * factor ...
    sim::Nanos rtt_margin = 50 * sim::kMicrosecond;  // ... and above baseline + margin
    sim::Nanos heartbeat = 10 * sim::kSecond;
    int missed_heartbeats = 3;
    int min_repeats = 3;
    sim::Nanos stale_after = 2 * sim::kMinute;
  };
  static Config config_from(const DetectorParams& params);

  SkeletonDetector(Config config, const sim::Topology* topology);
  void observe(const telemetry::Batch& batch) override;
  bool reads_flow_tables() const override { return true; }

  int skeleton_version() const { return inference_.version(); }
  const SkeletonInference& inference() const { return inference_; }

 private:
  using ProbeKey = std::tuple<int, int, bool>;  // src, dst, overlay

  void check_heartbeats(sim::Nanos now);
  void replan();
  void issue_round(sim::Nanos now);
  void issue_checks();
  void send(PlannedProbe probe);
  void analyze(sim::Nanos now);
  bool anomalous(const telemetry::ProbeResult& r);
  void alert(sim::Nanos now, std::vector<Suspect> suspects);

  Config config_;
  const sim::Topology* topology_;
  SkeletonInference inference_;
  std::vector<PlannedProbe> list_;
  std::size_t cursor_ = 0;
  sim::Nanos next_round_ = -1;
  std::vector<telemetry::ProbeResult> window_;     // results since the last analysis
  std::map<ProbeKey, sim::Nanos> baseline_;        // lowest RTT seen per probe
  sim::Nanos layer_median_[2] = {0, 0};            // median of baseline_ per layer (underlay, overlay)
  std::map<std::pair<int, int>, std::pair<sim::Nanos, bool>> underlay_;  // unordered pair: time, healthy
  std::map<std::pair<int, int>, std::vector<int>> learned_routes_;       // link numbers from reported paths
  std::vector<sim::Nanos> last_heartbeat_;
  std::set<int> silent_;
  std::set<std::string> alerted_;
  int healthy_windows_ = 0;
  std::vector<std::pair<telemetry::ProbeResult, bool>> history_;  // earlier windows' results, anomalous?
  std::vector<PlannedProbe> checks_;               // underlay probes step 1 wants sent
  bool checks_pending_ = false;
  std::set<std::pair<int, int>> awaited_;          // sent checks not yet answered (src, dst)
};

}  // namespace gauntlet::harness
