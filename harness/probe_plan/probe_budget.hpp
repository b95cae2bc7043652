#pragma once
// The probe-budget question: with N probes per second, what detection
// latency does each probing strategy give? A round probes every pair of its
// plan once; at a budget of B probes/s it takes T = probes / B, but never
// less than the busiest RNIC needs (ceil(max per RNIC / concurrency) ping
// trains, probe_plan.hpp). A fault on a planned path is seen by the first
// probe crossing it after its onset: uniform over the round, plus that
// probe's own ping train d, so latency is T/2 + d on average and T + d at
// worst. Spending more than probes / T_min buys nothing.
#include <vector>

#include "harness/probe_plan/probe_plan.hpp"

namespace gauntlet::harness {

struct BudgetPoint {
  double budget = 0;             // probes/s offered
  double probes_per_second = 0;  // spent: at most probes / min round
  double round_seconds = 0;
  double mean_latency_s = 0;
  double worst_latency_s = 0;
  double busiest_rnic_probes_per_second = 0;
  double busiest_rnic_pings_per_second = 0;
  bool rnic_bound = false;  // the busiest RNIC, not the budget, sets the round
};

struct BudgetCurve {
  std::string strategy;
  long long probes = 0;  // per round
  long long max_per_rnic = 0;
  double min_round_seconds = 0;
  double max_probes_per_second = 0;  // probes / min round: more is wasted
  std::vector<BudgetPoint> points;   // by budget, ascending
};

BudgetCurve budget_curve(const ProbePlan& plan, const models::ProbeCost& cost, std::vector<double> budgets);

// Budgets from the one that probes the plan once in `longest_round_s` (at
// least 0.1 probes/s) up to the plan's useful maximum, `per_decade` a
// decade (log-spaced), the maximum itself last.
std::vector<double> default_budgets(const ProbePlan& plan, double longest_round_s = 3600, int per_decade = 4);

}  // namespace gauntlet::harness
