#include "harness/probe_plan/probe_budget.hpp"

#include <gtest/gtest.h>

namespace gauntlet::harness {
namespace {

sim::ClusterShape cluster(int hosts) {
  sim::ClusterShape shape;
  shape.spines = 4;
  shape.leaves = 8;
  shape.hosts = hosts;
  shape.gpus_per_host = 8;
  shape.rnics_per_host = 8;
  return shape;
}

TEST(ProbeBudget, LatencyFallsWithTheBudgetUntilTheBusiestRnicSetsTheRound) {
  const sim::Topology topology(cluster(64));  // 512 RNICs
  const models::ProbeCost cost;               // 2 s ping trains, one at a time per RNIC
  const ProbePlan rail = plan_rail(topology, cost);
  const BudgetCurve curve = budget_curve(rail, cost, {1, 10, 100, 1e6});
  ASSERT_EQ(curve.points.size(), 4u);
  const double train = sim::to_seconds(cost.probe_duration());
  // 1 probe/s: the round is one probe after another.
  EXPECT_DOUBLE_EQ(curve.points[0].round_seconds, static_cast<double>(rail.probes));
  EXPECT_DOUBLE_EQ(curve.points[0].mean_latency_s, rail.probes / 2.0 + train);
  EXPECT_DOUBLE_EQ(curve.points[0].worst_latency_s, rail.probes + train);
  // Ten times the budget, a tenth of the round, while the budget binds.
  EXPECT_NEAR(curve.points[1].round_seconds, curve.points[0].round_seconds / 10, 1e-9);
  // A budget far past what the RNICs can run buys nothing: the busiest RNIC
  // runs its probes back to back, one ping train each, and no faster.
  const BudgetPoint& top = curve.points[3];
  EXPECT_TRUE(top.rnic_bound);
  EXPECT_DOUBLE_EQ(top.round_seconds, rail.round_seconds);
  EXPECT_LE(top.probes_per_second, curve.max_probes_per_second * (1 + 1e-12));
  EXPECT_NEAR(top.busiest_rnic_probes_per_second, cost.concurrency / train, 1e-9 + cost.concurrency / train * 0.01);
  for (std::size_t i = 1; i < curve.points.size(); ++i)
    EXPECT_LE(curve.points[i].mean_latency_s, curve.points[i - 1].mean_latency_s);
}

TEST(ProbeBudget, MorePingsPerProbeCostLatencyAtTheSameBudget) {
  const sim::Topology topology(cluster(16));
  models::ProbeCost light, heavy;
  heavy.pings_per_probe = light.pings_per_probe * 4;
  const auto a = budget_curve(plan_rail(topology, light), light, {1e6});
  const auto b = budget_curve(plan_rail(topology, heavy), heavy, {1e6});
  // Four times the ping train: four times the shortest round.
  EXPECT_NEAR(b.points[0].round_seconds, 4 * a.points[0].round_seconds, 1e-9);
  EXPECT_DOUBLE_EQ(b.points[0].busiest_rnic_pings_per_second, a.points[0].busiest_rnic_pings_per_second);
}

TEST(ProbeBudget, DefaultBudgetsEndAtTheUsefulMaximum) {
  const sim::Topology topology(cluster(16));
  const models::ProbeCost cost;
  const ProbePlan plan = plan_fullmesh(topology, cost);
  const auto budgets = default_budgets(plan);
  ASSERT_GE(budgets.size(), 2u);
  // The first probes the plan once an hour (8,128 pairs of 128 RNICs), not 0.1 probes/s.
  EXPECT_DOUBLE_EQ(budgets.front(), plan.probes / 3600.0);
  EXPECT_DOUBLE_EQ(default_budgets(plan_fullmesh(sim::Topology(cluster(1)), cost)).front(), 0.1);
  EXPECT_DOUBLE_EQ(budgets.back(), plan.probes / plan.round_seconds);
  for (std::size_t i = 1; i < budgets.size(); ++i) EXPECT_LT(budgets[i - 1], budgets[i]);
}

}  // namespace
}  // namespace gauntlet::harness
