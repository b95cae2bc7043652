#include "harness/probe_plan/probe_plan.hpp"

#include <algorithm>
#include <vector>

namespace gauntlet::harness {
namespace {

// Probes of a complete graph on m nodes, sources balanced: at most m/2 each.
long long balanced_max(long long m) { return m / 2; }

}  // namespace

double round_seconds(long long max_per_rnic, const models::ProbeCost& cost) {
  const long long c = std::max(1, cost.concurrency);
  const long long waves = (max_per_rnic + c - 1) / c;
  return static_cast<double>(waves) * sim::to_seconds(cost.probe_duration());
}

ProbePlan plan_fullmesh(const sim::Topology& t, const models::ProbeCost& cost) {
  ProbePlan plan;
  plan.strategy = "fullmesh";
  const long long n = t.endpoints();
  plan.probes = n * (n - 1) / 2;
  plan.max_per_rnic = balanced_max(n);
  plan.round_seconds = round_seconds(plan.max_per_rnic, cost);
  return plan;
}

ProbePlan plan_rail(const sim::Topology& t, const models::ProbeCost& cost) {
  ProbePlan plan;
  plan.strategy = "rail";
  const long long rails = t.shape().rnics_per_host;
  const long long per_rail = t.hosts();
  plan.probes = rails * per_rail * (per_rail - 1) / 2;
  plan.max_per_rnic = balanced_max(per_rail);
  plan.round_seconds = round_seconds(plan.max_per_rnic, cost);
  return plan;
}

ProbePlan plan_skeleton(const sim::Topology& t, const std::vector<std::vector<sim::EndpointId>>& groups,
                        const RouteFn& route, const models::ProbeCost& cost) {
  ProbePlan plan;
  plan.strategy = "skeleton";
  plan.list = skeleton_probe_list(t, groups, route, &plan.unidentifiable);
  plan.probes = static_cast<long long>(plan.list.size());
  std::vector<long long> load(static_cast<std::size_t>(t.endpoints()), 0);
  for (const PlannedProbe& p : plan.list)
    plan.max_per_rnic = std::max(plan.max_per_rnic, ++load[static_cast<std::size_t>(p.src)]);
  plan.round_seconds = round_seconds(plan.max_per_rnic, cost);
  return plan;
}

}  // namespace gauntlet::harness
