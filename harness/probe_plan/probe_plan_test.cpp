#include "harness/probe_plan/probe_plan.hpp"

#include <gtest/gtest.h>

#include <set>

#include "harness/probe_plan/identifiability.hpp"
#include "harness/probe_plan/job_groups.hpp"
#include "sim/ecmp.hpp"

namespace gauntlet::harness {
namespace {

struct SeedScale {
  int hosts;
  int leaves;
  int spines;
  int dp;                                 // DP group size of the job (tp 8, pp 8)
  double fullmesh_s, rail_s, skeleton_s;  // SkeletonHunter's round times
};

// Eight RNICs per host on 8 rails; pods of 32 hosts. The job's DP group size
// is not in the seed; 8 / 16 / 24 are chosen (the 2,048-RNIC job uses 192 of
// the 256 hosts, the rest serve other tenants).
const SeedScale kScales[] = {
    {64, 16, 8, 8, 560, 65, 8},
    {128, 32, 16, 16, 1123, 123, 17},
    {256, 64, 16, 24, 2034, 241, 25},
};

sim::ClusterShape shape(const SeedScale& s) {
  sim::ClusterShape c;
  c.hosts = s.hosts;
  c.leaves = s.leaves;
  c.spines = s.spines;
  c.gpus_per_host = 8;
  c.rnics_per_host = 8;
  return c;
}

models::JobSpec job(const SeedScale& s) {
  models::JobSpec j;
  j.parallelism = {8, 8, s.dp, 1};
  j.gpus = 8 * 8 * s.dp;
  return j;
}

TEST(ProbePlan, ReproducesSkeletonHunterRoundTimesWithinFifteenPercent) {
  const models::ProbeCost cost;  // the one documented setting
  for (const SeedScale& s : kScales) {
    const sim::Topology t(shape(s));
    ASSERT_EQ(t.endpoints(), s.hosts * 8);
    sim::EcmpRouter router(t, 7);
    const RouteFn route = [&](int a, int b) { return router.route(a, b); };
    const ProbePlan full = plan_fullmesh(t, cost);
    const ProbePlan rail = plan_rail(t, cost);
    const ProbePlan skeleton = plan_skeleton(t, job_groups(job(s), t), route, cost);
    SCOPED_TRACE(t.endpoints());
    EXPECT_NEAR(full.round_seconds, s.fullmesh_s, 0.15 * s.fullmesh_s);
    EXPECT_NEAR(rail.round_seconds, s.rail_s, 0.15 * s.rail_s);
    EXPECT_NEAR(skeleton.round_seconds, s.skeleton_s, 0.15 * s.skeleton_s);
    EXPECT_EQ(skeleton.unidentifiable, 0);
    EXPECT_EQ(full.probes, static_cast<long long>(t.endpoints()) * (t.endpoints() - 1) / 2);
  }
}

TEST(ProbePlan, AugmentationMakesEveryComponentOnSkeletonPathsIdentifiable) {
  // Two pods; one DP group straddles them, so its paths cross spines.
  sim::ClusterShape c;
  c.hosts = 16;
  c.leaves = 16;
  c.spines = 4;
  c.rnics_per_host = 8;
  const sim::Topology t(c);
  sim::EcmpRouter router(t, 3);
  const RouteFn route = [&](int a, int b) { return router.route(a, b); };
  std::vector<std::vector<int>> groups = {{t.endpoint(6, 3), t.endpoint(7, 3), t.endpoint(8, 3), t.endpoint(9, 3)}};

  // The skeleton's own overlay pairs alone leave flow tables and host links
  // with equal columns (they lie on exactly the same paths).
  {
    PathMatrix bare(component_count(t));
    std::set<int> comps;
    for (std::size_t i = 0; i < groups[0].size(); ++i)
      for (std::size_t j = i + 1; j < groups[0].size(); ++j) {
        auto p = probe_components(t, {groups[0][i], groups[0][j], true}, route);
        bare.add_path(p);
        comps.insert(p.begin(), p.end());
      }
    EXPECT_FALSE(bare.ambiguous({comps.begin(), comps.end()}).empty());
  }

  int left = -1;
  const auto list = skeleton_probe_list(t, groups, route, &left);
  EXPECT_EQ(left, 0);
  PathMatrix matrix(component_count(t));
  std::set<int> on_skeleton;
  for (const PlannedProbe& p : list) {
    auto comps = probe_components(t, p, route);
    matrix.add_path(comps);
    if (p.overlay) on_skeleton.insert(comps.begin(), comps.end());
  }
  // Every column non-zero and unique.
  std::set<std::uint64_t> columns;
  for (int comp : on_skeleton) {
    EXPECT_TRUE(matrix.covered(comp)) << component_name(t, comp);
    EXPECT_TRUE(columns.insert(matrix.signature(comp)).second) << component_name(t, comp);
  }
  EXPECT_GT(on_skeleton.size(), 8u + 4u);  // 4 host links, 4 flow tables and fabric links
  EXPECT_GT(list.size(), 6u);              // more than the group's 6 pairs
}

}  // namespace
}  // namespace gauntlet::harness
