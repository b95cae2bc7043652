// gauntlet plan probes: the probe-budget question from the command line.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "gauntlet_cli.hpp"

namespace {

using cli_test::gauntlet;
using cli_test::scratch;
using cli_test::slurp;

TEST(PlanProbes, TheBudgetCurveFollowsTheProbeCost) {
  const auto base = gauntlet("plan probes scenarios/demo.yaml --json --strategy rail --budget 1,1000000");
  ASSERT_EQ(base.exit_code, 0) << base.err;
  const auto heavy =
      gauntlet("plan probes scenarios/demo.yaml --json --strategy rail --budget 1,1000000 --probe-cost pings=80");
  ASSERT_EQ(heavy.exit_code, 0) << heavy.err;
  const auto a = nlohmann::json::parse(base.out)["strategies"]["rail"];
  const auto b = nlohmann::json::parse(heavy.out)["strategies"]["rail"];
  // At 1 probe/s the budget sets the round; with unlimited budget the
  // busiest RNIC does, and four times the pings (default 20) make it four
  // times as long.
  EXPECT_DOUBLE_EQ(a["budget_curve"][0]["round_seconds"].get<double>(), a["probes"].get<double>());
  EXPECT_TRUE(b["budget_curve"][1]["rnic_bound"].get<bool>());
  EXPECT_NEAR(b["round_seconds"].get<double>(), 4 * a["round_seconds"].get<double>(), 1e-9);
  // plan-probes is the same question.
  EXPECT_EQ(gauntlet("plan-probes scenarios/demo.yaml --json --strategy rail --budget 1,1000000").out, base.out);
  const auto bad = gauntlet("plan probes scenarios/demo.yaml --probe-cost pings=4,speed=2");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "--probe-cost:1:9: expected pings=N, interval=DURATION or concurrency=N, got 'speed=2'\n");
}

TEST(PlanProbes, SaysWhichJobsASharedClusterPlanCovers) {
  // A tenant's skeleton prober sees its own flow tables: the plan is the
  // observed job's, and the output says so rather than leaving the other out silently.
  const auto tenant = gauntlet("plan probes scenarios/multi-tenant/noisy-neighbour.yaml --strategy skeleton");
  ASSERT_EQ(tenant.exit_code, 0) << tenant.err;
  EXPECT_NE(tenant.out.find("2 jobs share the cluster: the skeleton plan covers job victim only"), std::string::npos)
      << tenant.out;
  // Watching the whole cluster, it plans for both jobs' groups: more probes.
  const auto path = scratch("cluster-scope.yaml");
  {
    std::ofstream out(path);
    out << slurp(std::string(GAUNTLET_SOURCE_DIR) + "/scenarios/multi-tenant/noisy-neighbour.yaml")
        << "detectors_scope: cluster\n";
  }
  const auto cluster = gauntlet("plan probes " + path.string() + " --strategy skeleton --json");
  ASSERT_EQ(cluster.exit_code, 0) << cluster.err;
  const auto one = gauntlet("plan probes scenarios/multi-tenant/noisy-neighbour.yaml --strategy skeleton --json");
  EXPECT_GT(nlohmann::json::parse(cluster.out)["strategies"]["skeleton"]["probes"].get<int>(),
            nlohmann::json::parse(one.out)["strategies"]["skeleton"]["probes"].get<int>());
}

}  // namespace
