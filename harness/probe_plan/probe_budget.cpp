#include "harness/probe_plan/probe_budget.hpp"

#include <algorithm>
#include <cmath>

namespace gauntlet::harness {

BudgetCurve budget_curve(const ProbePlan& plan, const models::ProbeCost& cost, std::vector<double> budgets) {
  BudgetCurve curve;
  curve.strategy = plan.strategy;
  curve.probes = plan.probes;
  curve.max_per_rnic = plan.max_per_rnic;
  curve.min_round_seconds = plan.round_seconds;
  curve.max_probes_per_second = plan.round_seconds > 0 ? static_cast<double>(plan.probes) / plan.round_seconds : 0;
  const double train = sim::to_seconds(cost.probe_duration());
  std::sort(budgets.begin(), budgets.end());
  for (double budget : budgets) {
    if (!(budget > 0) || plan.probes == 0) continue;
    BudgetPoint point;
    point.budget = budget;
    const double budget_round = static_cast<double>(plan.probes) / budget;
    point.rnic_bound = budget_round <= plan.round_seconds;
    point.round_seconds = std::max(budget_round, plan.round_seconds);
    point.probes_per_second = static_cast<double>(plan.probes) / point.round_seconds;
    point.mean_latency_s = point.round_seconds / 2 + train;
    point.worst_latency_s = point.round_seconds + train;
    point.busiest_rnic_probes_per_second = static_cast<double>(plan.max_per_rnic) / point.round_seconds;
    point.busiest_rnic_pings_per_second = point.busiest_rnic_probes_per_second * cost.pings_per_probe;
    curve.points.push_back(point);
  }
  return curve;
}

std::vector<double> default_budgets(const ProbePlan& plan, double longest_round_s, int per_decade) {
  std::vector<double> budgets;
  if (plan.round_seconds <= 0 || plan.probes == 0) return budgets;
  const double low = std::max(0.1, static_cast<double>(plan.probes) / longest_round_s);
  const double high = static_cast<double>(plan.probes) / plan.round_seconds;
  for (int k = 0; low * std::pow(10.0, static_cast<double>(k) / per_decade) < high; ++k)
    budgets.push_back(low * std::pow(10.0, static_cast<double>(k) / per_decade));
  budgets.push_back(high);
  return budgets;
}

}  // namespace gauntlet::harness
