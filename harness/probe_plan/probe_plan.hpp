#pragma once
// Probe planning: which endpoint pairs a prober checks each round under a
// strategy, and how long the round takes under the probe service's cost
// model (models::ProbeCost).
//
// Round time: pairs are probed once each (RTT is symmetric) and each pair is
// assigned to whichever end has fewer probes so far; a source RNIC runs
// `concurrency` probes at a time, each lasting one ping train, so
//   round_seconds = ceil(max probes per RNIC / concurrency) * probe_duration.
//
// Strategies:
//   fullmesh  every pair of RNICs in the cluster.
//   rail      the topology-reduced list: pairs of RNICs with the same index
//             (on the same rail plane). Rail-aligned collectives only use
//             these, and they still cross every leaf and spine.
//   skeleton  the traffic skeleton: every pair inside each communication
//             group (a DP communicator's RNICs; the ring order changes across
//             channels and restarts, the membership does not), probed through
//             the overlay, plus the pairs deTector-style augmentation adds
//             until every component on those paths is identifiable.
//
// Calibration: with the default ProbeCost (2 s ping trains, one at a time per
// RNIC) this reproduces SkeletonHunter's round times for 512 / 1,024 / 2,048
// RNICs (full mesh ~560 / 1,123 / 2,034 s, reduced ~65 / 123 / 241 s,
// skeleton ~8 / 17 / 25 s) within 10%, for jobs with DP groups of 8 / 16 / 24.
#include <string>
#include <vector>

#include "harness/probe_plan/probe_list.hpp"
#include "models/probe_service.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness {

struct ProbePlan {
  std::string strategy;
  long long probes = 0;        // per round
  long long max_per_rnic = 0;  // probes the busiest source RNIC runs per round
  double round_seconds = 0;
  int unidentifiable = 0;          // components left sharing a column with another (skeleton)
  std::vector<PlannedProbe> list;  // skeleton only; fullmesh and rail are counted, not listed
};

double round_seconds(long long max_per_rnic, const models::ProbeCost& cost);

ProbePlan plan_fullmesh(const sim::Topology& t, const models::ProbeCost& cost);
ProbePlan plan_rail(const sim::Topology& t, const models::ProbeCost& cost);
// groups: the RNIC endpoints of each communication group.
ProbePlan plan_skeleton(const sim::Topology& t, const std::vector<std::vector<sim::EndpointId>>& groups,
                        const RouteFn& route, const models::ProbeCost& cost);

}  // namespace gauntlet::harness
