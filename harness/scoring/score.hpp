#pragma once
// Scores alerts against injected faults. The same code scores a simulated run
// and a real canary run (gauntlet score).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/detectors/alert.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness {

// One injected fault as the scorer sees it: a line of faults.jsonl.
struct FaultEpisode {
  std::string id;
  std::string type;
  std::string target;  // empty for faults without a target (reconfigure)
  double start_s = 0;
  std::optional<double> end_s;  // none: lasted to the end of the run
  // false: a latent fault (it slowed no iteration); scored apart from the
  // impactful ones, and as much a fault as they are
  bool affected_job = true;
  bool benign = false;  // ground truth says "no fault" (a reconfigure, declared background): alerts on it are false
  // A condition of the healthy fleet's background (a corrupting link, a slow
  // machine, an application XID, an ECN burst): benign, and reported only by
  // an alert naming its target (others open meanwhile are not about it).
  bool background = false;
  // Jobs sharing the cluster: the jobs the fault touched (harness/runner/tenants.hpp);
  // empty for a job alone.
  std::vector<std::string> jobs;
  // Scoring one tenant: the fault touched only other jobs. Not scored toward
  // this tenant's recall, but an alert naming its target is true (a faulty
  // component is faulty whoever it hurt): an alert on an unaffecting fault.
  bool other_tenants = false;
  std::string cause;  // what its source calls it (a failure-rate preset's category); empty if none
};

struct LatencyStats {
  double mean = 0;
  double p50 = 0;
  double p95 = 0;
};

// How one fault fared; the aggregates below are computed from these.
struct FaultOutcome {
  std::string id;
  bool scored = false;                       // not benign: counts toward recall
  bool latent = false;                       // scored, but did not slow the job
  bool detected = false;                     // some alert matched it
  int alerts = 0;                            // alerts matched to it
  double detection_latency_s = 0;            // first matching alert - start (when detected)
  std::optional<double> time_to_localize_s;  // first matching alert that ranks the target alone on top
  // Credit of the first matching alert that names suspects (see localization_credit).
  double top1 = 0;
  double top3 = 0;
  // The same alert's top-1 credit at coarser levels: the target's host or
  // switch, and its pod (none without the cluster's layout).
  double host_top1 = 0;
  std::optional<double> pod_top1;
};

// Figures over one class of faults. A figure without evidence behind it is
// empty: recall with no fault to find, latency and localization with no
// detection. The counts are the denominators.
struct ClassScore {
  int scored_faults = 0;
  int detected = 0;                                 // denominator of latency and localization
  int localized = 0;                                // faults whose target some matching alert ranked alone on top
  std::optional<double> recall;                     // detected / scored_faults
  std::optional<LatencyStats> detection_latency_s;  // over the detected faults
  std::optional<double> localization_top1;          // mean credit over the detected faults
  std::optional<double> localization_top3;
  // Top-1 credit at the target's host or switch, and at its pod: an operator
  // who drains host h5 for a fault on h5.gpu2 acted on the right unit.
  std::optional<double> localization_host_top1;
  std::optional<double> localization_pod_top1;
  std::optional<LatencyStats> time_to_localize_s;  // over the localized faults
};

// What a detector cost in a simulated run, measured against the fault-free
// counterfactual from the same seed.
struct RunCosts {
  int false_isolations = 0;
  double lost_iterations = 0;
  double lost_gpu_hours = 0;
  long long probes_sent = 0;
  long long telemetry_bytes = 0;
};

struct DetectorScore {
  int alerts = 0;
  int false_alerts = 0;
  int benign_alerts = 0;            // false alerts raised during a benign episode (a reconfigure, background noise)
  int other_tenant_alerts = 0;      // true alerts naming a fault that touched only other tenants' jobs
  std::optional<double> precision;  // (alerts - false_alerts) / alerts; empty with no alert
  ClassScore overall;               // every non-benign fault
  ClassScore impactful;             // the faults that slowed the job
  ClassScore latent;                // the faults that did not
  // In the order of the input, but for a trailing run of background
  // episodes, which are never scored (a month lists 10^5-10^6 after its
  // faults): those have no outcome.
  std::vector<FaultOutcome> faults;
  std::optional<RunCosts> costs;  // a simulated run's; none for alerts scored from a real run
};

// `score` with the outcomes of the faults it scored only, for a report: a
// month's benign background adds hundreds of thousands of others. (A new
// field of DetectorScore is copied there too.)
DetectorScore with_scored_outcomes_only(const DetectorScore& score);

struct ScoringOptions {
  // An alert up to this long after a fault ended still matches it: detectors
  // that work on windows of iterations report a little late.
  double grace_s = 60;
  double run_end_s = 0;  // where open-ended faults end
  // Whether an id names a component of the cluster (unset: every id does).
  // An alert whose suspects are all unknown is false: it named nothing there.
  std::function<bool(const std::string&)> known_component;
  // The pods a component belongs to (a link: both ends'); unset: pods are
  // not known and pod-level localization is not scored.
  std::function<std::vector<std::string>(const std::string&)> pods_of;
};

// The hosts or switches a component is part of or attaches: h5 for h5.gpu2
// and h5.nic1, h5 and leaf1 for h5.nic1~leaf1, leaf1 and spine0 for
// leaf1~spine0, a switch itself. Empty for an id that is none.
std::vector<std::string> host_level_units(const std::string& id);

// A cluster's pods: hosts by their group, a leaf by the group it serves, a
// spine as a pod of its own (it serves every pod); a link both ends'.
std::function<std::vector<std::string>(const std::string&)> pods_in(const sim::ClusterShape& shape);

// Top-k credit for a set of units: as localization_credit, with a suspect
// right when `unit_of` of it shares a unit with `units` (several suspects
// can be; the credit is the chance one of them is within the first k).
double level_credit(const std::vector<Suspect>& suspects, const std::vector<std::string>& units,
                    const std::function<std::vector<std::string>(const std::string&)>& unit_of, int k);

// One tenant's faults to score: those touching `job`, in order, then the
// other non-benign ones marked other_tenants.
std::vector<FaultEpisode> faults_for_tenant(const std::vector<FaultEpisode>& faults, const std::string& job);

// Localization credit of one alert for `target` among its top k suspects.
// Suspects rank by score, highest first; suspects with equal scores share a
// rank range, and the target gets the share of its range that lies within
// the first k places. A target tied on top with one other suspect gets 1/2
// for top-1; one tied with three others at places 2-5 gets 2/4 for top-3.
// Not named: 0.
double localization_credit(const std::vector<Suspect>& suspects, const std::string& target, int k);

// Matching: each fault is an episode [start, end + grace] (end: end_s, or
// run_end_s for open-ended faults; with run_end_s <= 0 they never close). An
// alert matches the earliest-starting open non-benign episode whose target it
// names among its suspects, else the earliest-starting open non-benign
// episode (a detection without localization) unless it names the target of
// an open benign episode. An alert naming the target of an open
// other_tenants episode (and no scored one) matches it: true, not scored. Alerts matching nothing are false, including
// those that fall only in benign episodes or blame one. Latent faults (affected_job=false) are matched and scored like
// the others and reported in their own class.
DetectorScore score_detector(const std::vector<FaultEpisode>& faults, const std::vector<Alert>& alerts,
                             const ScoringOptions& options);

}  // namespace gauntlet::harness
