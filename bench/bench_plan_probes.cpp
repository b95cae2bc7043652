// plan-probes must answer in under a second for a 40,000-RNIC cluster: all
// three strategies, including the skeleton's identifiability augmentation.
#include <benchmark/benchmark.h>

#include "harness/probe_plan/job_groups.hpp"
#include "harness/probe_plan/probe_plan.hpp"
#include "sim/ecmp.hpp"

namespace {

using namespace gauntlet;

void BM_PlanProbes40kRnics(benchmark::State& state) {
  sim::ClusterShape shape;
  shape.hosts = 5120;  // 40,960 RNICs in 10 pods of 512 hosts
  shape.leaves = 80;
  shape.spines = 64;
  shape.gpus_per_host = 8;
  shape.rnics_per_host = 8;
  const sim::Topology topology(shape);
  models::JobSpec job;
  job.parallelism = {8, 80, 64, 1};  // one job over the whole cluster, DP groups of 64
  job.gpus = 40960;
  const auto groups = harness::job_groups(job, topology);
  const sim::EcmpRouter router(topology, 7);
  const harness::RouteFn route = [&router](int a, int b) { return router.route(a, b); };
  const models::ProbeCost cost;
  for (auto _ : state) {
    auto full = harness::plan_fullmesh(topology, cost);
    auto rail = harness::plan_rail(topology, cost);
    auto skeleton = harness::plan_skeleton(topology, groups, route, cost);
    benchmark::DoNotOptimize(full.round_seconds + rail.round_seconds + skeleton.round_seconds);
    state.counters["skeleton_probes"] = static_cast<double>(skeleton.probes);
    state.counters["skeleton_round_s"] = skeleton.round_seconds;
  }
}
BENCHMARK(BM_PlanProbes40kRnics)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
