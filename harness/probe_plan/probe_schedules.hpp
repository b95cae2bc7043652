#pragma once
// The reference detectors' probing as detection_model.hpp sees it, and the
// settings that spend a budget of probes per second with the least
// predicted latency.
//
// skeleton  (harness/detectors/skeleton_detector.hpp) sends `budget` probes
//           of its list each `round`, where the last round left off, so a
//           list longer than the budget is covered in ceil(list / budget)
//           rounds; the model takes that as the cycle.
// pingmesh  (harness/detectors/pingmesh_detector.hpp) probes every pair under
//           each leaf each `round`, plus `inter_tor_sample` endpoint pairs
//           drawn at random (a draw on one leaf is dropped).
#include <functional>
#include <string>
#include <vector>

#include "harness/probe_plan/detection_model.hpp"
#include "harness/probe_plan/probe_list.hpp"
#include "models/probe_service.hpp"

namespace gauntlet::harness {

// The spine a probe from src to dst crosses (-1: both on one leaf), as the fabric hashes it.
using SpineFn = std::function<int(sim::EndpointId, sim::EndpointId)>;

// Each listed probe's components, computed once for every setting tried.
struct ListCrossings {
  std::vector<PlannedProbe> probes;
  std::vector<std::size_t> begin;  // into components, one more than probes
  std::vector<int> components;
};
ListCrossings list_crossings(const sim::Topology& t, const std::vector<PlannedProbe>& list, const RouteFn& route);

// `tie_rounds`: the skeleton detector's, times it probes tied links apart.
ProbeSchedule skeleton_schedule(const sim::Topology& t, const ListCrossings& list, long long per_round,
                                double round_seconds, const models::ProbeCost& cost, int tie_rounds);
// The most probes one RNIC sources in a round of that schedule.
long long skeleton_busiest_source(const sim::Topology& t, const ListCrossings& list, long long per_round);

struct PingmeshShape {
  long long intra_pairs = 0;       // per round: every pair under each leaf
  long long busiest_intra = 0;     // probes the busiest RNIC sources among them
  double cross_leaf_share = 0;     // of random draws, those joining two leaves (the rest are dropped)
  std::vector<double> draw_share;  // per component: chance one draw sent (joining two leaves) crosses it
};
// Enumerates every ordered pair up to 16.8 million of them (4,096 RNICs),
// a fixed sample of 4 million beyond.
PingmeshShape pingmesh_shape(const sim::Topology& t, const SpineFn& spine);
ProbeSchedule pingmesh_schedule(const sim::Topology& t, const PingmeshShape& shape, double draws, double round_seconds,
                                const models::ProbeCost& cost);

// A detector's settings for one budget and what the model predicts of them.
struct BudgetSetting {
  double budget = 0;             // probes/s offered
  double probes_per_second = 0;  // spent
  double round_seconds = 0;
  long long per_round = 0;  // skeleton: its `budget` (probes a round); pingmesh: its `inter_tor_sample`
  std::string detector;     // the detector entry that realises it, as a scenario writes it
  std::vector<ClassPrediction> predictions;  // per fault class asked for
};

// The settings spending at most `budget` with the least predicted mean
// latency on faults[0] (rounds never shorter than the busiest RNIC needs);
BudgetSetting best_skeleton_setting(const sim::Topology& t, const ListCrossings& list, const models::ProbeCost& cost,
                                    double budget, const std::vector<FaultClass>& faults, int tie_rounds);
BudgetSetting best_pingmesh_setting(const sim::Topology& t, const PingmeshShape& shape, const models::ProbeCost& cost,
                                    double budget, const std::vector<FaultClass>& faults);

}  // namespace gauntlet::harness
