#pragma once
// Pingmesh / R-Pingmesh: topology-driven underlay probing with fixed
// thresholds. Each round probes every RNIC pair under one ToR (leaf) and a
// seeded sample of `inter_tor_sample` pairs across ToRs, all on the bare
// underlay: a fault inside the container overlay (a stale flow table) is
// invisible to it by construction. A probe fails when lost or slower than
// `rtt_threshold`. An RNIC is blamed when at least `rnic_fraction` of the
// peers it was probed with failed and its host link is the best underlay
// suspect; otherwise the links failures follow (skeleton_localize.hpp).
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "harness/detectors/detector.hpp"
#include "harness/detectors/registry.hpp"
#include "harness/detectors/name_table.hpp"
#include "sim/rng.hpp"

namespace gauntlet::harness {

class PingmeshDetector : public Detector {
 public:
  struct Config {
    std::string name = "pingmesh";  // whose probe results to read
    sim::Nanos round = 30 * sim::kSecond;
    long long inter_tor_sample = 64;  // inter-ToR pairs per round
    sim::Nanos rtt_threshold = 100 * sim::kMicrosecond;
    double rnic_fraction = 0.5;
    std::uint64_t seed = 1;
  };
  // Its name, summary, parameters and how to make one: its registry entry.
  static DetectorInfo info();
  static Config config_from(const DetectorParams& params);

  PingmeshDetector(Config config, const sim::Topology* topology);
  void observe(const telemetry::Batch& batch) override;
  bool reads_heartbeats() const override { return false; }

  // The pairs (src, dst endpoints) one round probes; exposed for tests.
  std::vector<std::pair<int, int>> round_pairs();

 private:
  void analyze(sim::Nanos now);
  // A round's results are kept with their names interned (a round holds a
  // quarter of a million probes at 16,384 GPUs) and made whole again only for
  // a round with failures, the one that reads more than whether each failed.
  struct WindowProbe {
    std::uint32_t src = 0, dst = 0;
    std::uint32_t path_begin = 0, path_end = 0;  // into window_paths_
    bool lost = false;
    sim::Nanos rtt_ns = 0;
  };
  // A round's results come in the order its probes were sent, which repeats
  // round after round: each field (src, dst, a path position) remembers
  // which name followed each name in it last time, and a name that follows
  // as before is confirmed with one comparison instead of a table lookup.
  struct FieldStream {
    NameTable::Id last = kNoId;
    std::vector<NameTable::Id> next;  // by id: the id that followed it in this field
  };
  static constexpr NameTable::Id kNoId = ~NameTable::Id{0};
  NameTable::Id intern(FieldStream& field, const std::string& name);
  void keep(const telemetry::ProbeResult& r);
  // The kept results as the prober reported them (src, dst, path, lost, RTT); empties the window.
  std::vector<telemetry::ProbeResult> take_window();
  // Distinct peers `nic` was probed with in a round, and those whose probes failed.
  struct PeerCounts {
    std::size_t probed = 0, failed = 0;
  };
  PeerCounts peer_counts(const std::vector<telemetry::ProbeResult>& results, const std::string& nic) const;

  Config config_;
  const sim::Topology* topology_;
  sim::Rng rng_;
  int round_index_ = 0;
  sim::Nanos next_round_ = 0;
  std::vector<WindowProbe> window_;
  std::vector<std::uint32_t> window_paths_;
  NameTable names_;
  std::vector<FieldStream> fields_;     // src, dst, then each path position
  std::vector<std::string> nic_names_;  // by endpoint, made at the first round: a round names half a million ends
  std::set<std::string> alerted_;
  int healthy_rounds_ = 0;
};

}  // namespace gauntlet::harness
