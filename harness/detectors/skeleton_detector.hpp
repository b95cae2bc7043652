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
//      Suspects tied on top are told apart before the alert: probes that
//      each cross one of them and none of the others (identifying_probes),
//      up to `tie_rounds` times. Host links of several RNICs of one host
//      failing together name the host. A host link whose RNIC's traffic
//      moved to a sibling RNIC (SkeletonInference::failed_over) names that
//      RNIC first: the port went dark and NCCL fell back off it.
//   3. neither: the RNIC boundary of the endpoint most failed probes share.
// Congestion, while no probe is lost or anomalous: probes back later than
// their own best by `congestion_margin` vote for the fabric links on their
// paths that they cross at least as often as timely probes do, and a link
// counts only if its switch ports' queue makes a packet wait that much
// longer too (skeleton_congestion.hpp: a stale flow table's delay comes with
// empty queues). Ties get the identifying probes as above; links of one
// spine name the spine. It is alerted once seen in two analyses in a row,
// and not while an RNIC's flows have failed over; a new skeleton (moved
// flows), or the end of such a hold, re-measures the queue floors.
// A monitoring agent whose heartbeats stop is either hung or on a dead host.
// Peers under the same leaves probe the host's RNICs: if any answers, the
// agent alone is reported, as `monitor` on h<N>.agent; if none does, the
// host is down (`fail_stop` on h<N>). While a host is silent its probes'
// failures are its own, never a link's: the probes it no longer sends are
// missing, not lost, so a silent agent never reads as a network fault.
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "harness/detectors/detector.hpp"
#include "harness/detectors/registry.hpp"
#include "harness/detectors/skeleton_congestion.hpp"
#include "harness/detectors/skeleton_inference.hpp"
#include "harness/probe_plan/probe_list.hpp"

namespace gauntlet::harness {

class SkeletonDetector : public Detector {
 public:
  struct Config {
    std::string name = "skeleton";  // whose probe results to read
    sim::Nanos round = 30 * sim::kSecond;
    long long budget = 256;                          // probes per round
    double rtt_factor = 2.0;                         // anomalous above baseline * factor ...
    sim::Nanos rtt_margin = 50 * sim::kMicrosecond;  // ... and above baseline + margin
    sim::Nanos heartbeat = 10 * sim::kSecond;
    int missed_heartbeats = 3;
    int min_repeats = 3;
    sim::Nanos stale_after = 2 * sim::kMinute;
    int tie_probes = 4;  // identifying probes per tied suspect
    int tie_rounds = 2;  // times a tie is probed before it is alerted as one
    // Above the wait the suite's background (at most 20% load) adds to a
    // fabric queue on the flow engine: about 0.1 us (a port's queue is its
    // mean over an iteration, filled only while the job's bursts run).
    sim::Nanos congestion_margin = 150;
  };
  // Its name, summary, parameters and how to make one: its registry entry.
  static DetectorInfo info();
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
  // One window's results, judged: the failed ones (and which of them are
  // overlay probes), the healthy ones, and the RTTs the congestion step reads.
  struct Judgement {
    std::vector<const telemetry::ProbeResult*> failed, healthy, failed_overlay;
    std::vector<std::pair<const telemetry::ProbeResult*, bool>> judged;  // inflated over the margin?
  };
  void analyze(sim::Nanos now);
  std::vector<telemetry::ProbeResult> take_window();
  void update_layer_medians();
  Judgement judge(const std::vector<telemetry::ProbeResult>& results);
  std::size_t remember(sim::Nanos now, const Judgement& j);
  std::pair<int, int> ends(const telemetry::ProbeResult& r) const;
  void requeue(const std::vector<telemetry::ProbeResult>& results, sim::Nanos since);
  bool overlay_step(sim::Nanos now, const Judgement& j, sim::Nanos recent,
                    std::vector<const telemetry::ProbeResult*>& unexplained,
                    std::vector<const telemetry::ProbeResult*>& overlay_only);
  void blame_rnic_boundary(sim::Nanos now, const std::vector<const telemetry::ProbeResult*>& failures);
  bool anomalous(const telemetry::ProbeResult& r);
  void alert(sim::Nanos now, std::vector<Suspect> suspects);
  void check_reachability(int host);
  void note_reachability(const telemetry::ProbeResult& r);
  bool break_tie(const std::vector<Suspect>& links);
  std::vector<Suspect> explain_links(std::vector<Suspect> links) const;
  // Judged: unlost probes whose pair had a best RTT before, inflated or not.
  void analyze_congestion(sim::Nanos now, const std::vector<std::pair<const telemetry::ProbeResult*, bool>>& judged,
                          bool loss_seen);

  Config config_;
  const sim::Topology* topology_;
  SkeletonInference inference_;
  std::vector<PlannedProbe> list_;
  std::size_t cursor_ = 0;
  sim::Nanos next_round_ = -1;
  std::vector<telemetry::ProbeResult> window_;  // results since the last analysis
  std::map<ProbeKey, sim::Nanos> baseline_;     // lowest RTT seen per probe
  sim::Nanos layer_median_[2] = {0, 0};         // median of baseline_ per layer (underlay, overlay)
  std::map<std::pair<int, int>, std::pair<sim::Nanos, bool>> underlay_;  // unordered pair: time, healthy
  std::map<std::pair<int, int>, std::vector<int>> learned_routes_;       // link numbers from reported paths
  std::vector<sim::Nanos> last_heartbeat_;
  std::set<int> silent_;
  std::map<int, std::set<std::pair<int, int>>> reach_pending_;  // silent host -> its reachability probes out
  std::map<int, bool> reach_answered_;                          // silent host -> did any of its RNICs answer
  int tie_attempts_ = 0;
  std::set<std::string> alerted_;
  int healthy_windows_ = 0;
  std::vector<std::pair<telemetry::ProbeResult, bool>> history_;  // earlier windows' results, anomalous?
  std::vector<PlannedProbe> checks_;                              // underlay probes step 1 wants sent
  bool checks_pending_ = false;
  std::set<std::pair<int, int>> awaited_;  // sent checks not yet answered (src, dst)
  LinkQueues queues_;
  std::vector<std::pair<telemetry::ProbeResult, bool>> congestion_history_;  // last two rounds, inflated?
  std::set<std::string> congestion_alerted_;
  std::set<int> congested_;      // links of the congestion alerted, until their queues drain
  int congestion_ties_ = 0;      // identifying rounds spent on the current congestion tie
  std::string congestion_seen_;  // the previous analysis's best congestion suspect
  bool held_ = false;            // the congestion vote was held for a failure
};

}  // namespace gauntlet::harness
