#pragma once
// `flow_vote`: 007's vote (Arzani et al., "007: Democratically Finding the
// Cause of Packet Drops", NSDI 2018) over IPFIX-style flow records. Every
// flow record that counts retransmitted packets votes 1/h for each of the h
// links on its path; the votes of the records that ended within `window`
// rank the links. Links whose votes newly reach `min_votes` are blamed in a
// `network` alert, first, then every link with at least half the top's
// votes (eight suspects at most); a link alerts again only after its votes
// fell below the threshold. Like 007 it finds every link that drops the job's packets, a
// link corrupting at a healthy fabric's background rate as readily as a
// faulty one, and it sees only links the job's flows cross.
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/detectors/detector.hpp"
#include "harness/detectors/registry.hpp"

namespace gauntlet::harness {

struct FlowVoteConfig {
  sim::Nanos window = 2 * sim::kMinute;  // records ending this long ago still vote
  double min_votes = 1.0;                // votes that blame a link
};

class FlowVoteDetector : public Detector {
 public:
  static DetectorInfo info();
  static constexpr const char* kName = "flow_vote";
  static constexpr std::size_t kMaxSuspects = 8;
  explicit FlowVoteDetector(FlowVoteConfig config) : config_(config) {}
  static FlowVoteConfig config_from(const DetectorParams& params);

  void observe(const telemetry::Batch& batch) override;
  bool reads_heartbeats() const override { return false; }
  bool reads_samples() const override { return false; }
  bool reads_flow_records() const override { return true; }

 private:
  struct Vote {
    sim::Nanos at = 0;  // the record's end
    std::vector<std::string> links;
    double each = 0;
  };
  void add(const telemetry::FlowRecord& flow);
  void expire(sim::Nanos now);

  FlowVoteConfig config_;
  std::deque<Vote> votes_;  // in arrival order
  std::map<std::string, double> tally_;
  std::set<std::string> blamed_;  // links over the threshold at the last batch
};

}  // namespace gauntlet::harness
