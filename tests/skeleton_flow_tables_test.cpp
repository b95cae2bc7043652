// Skeleton inference against a simulated job's flow tables: the inferred
// groups and edges are compared with the placement's ground truth, which the
// detector itself is never told. Detectors stay telemetry-only, so a test
// that drives the job model and the inference together sits here.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "harness/detectors/skeleton_inference.hpp"
#include "models/telemetry/flow_table_job_run.hpp"
#include "sim/component_id.hpp"

namespace gauntlet::harness {
namespace {

using sim::kSecond;
using Pairs = std::set<std::pair<sim::EndpointId, sim::EndpointId>>;
using Groups = std::vector<std::vector<sim::EndpointId>>;

// A simulated tp8 pp2 dp4 job: 8 hosts of 8 GPUs and 8 RNICs.

sim::ClusterShape job_cluster(int hosts) {
  sim::ClusterShape s;
  s.spines = 2;
  s.leaves = 8;
  s.hosts = hosts;
  s.gpus_per_host = 8;
  s.rnics_per_host = 8;
  return s;
}

models::JobSpec tp8_pp2_dp4() {
  models::JobSpec j;
  j.name = "t";
  j.gpus = 64;
  j.parallelism = {8, 2, 4, 1};
  j.compute_per_iteration = 4 * kSecond;
  j.gradient_bytes = 1'000'000'000;
  j.activation_bytes = 64'000'000;
  j.microbatches = 4;
  j.checkpoint_interval = 0;
  j.restart_cost = 20 * kSecond;
  return j;
}

// The groups the job's true layout makes: each DP ring's RNICs, and each
// pipeline pair's.
Groups truth(const models::testing::FlowTableJobRun& run, bool last) {
  const auto& rings = last ? run.ring_edges_last : run.ring_edges_first;
  const auto& pairs = last ? run.pipeline_pairs_last : run.pipeline_pairs_first;
  std::map<sim::EndpointId, sim::EndpointId> next(rings.begin(), rings.end());
  std::set<std::vector<sim::EndpointId>> groups;
  for (const auto& [a, b] : rings) {
    std::vector<sim::EndpointId> ring{a};
    for (sim::EndpointId e = next[a]; e != a; e = next[e]) ring.push_back(e);
    std::sort(ring.begin(), ring.end());
    groups.insert(ring);
  }
  for (const auto& [a, b] : pairs) groups.insert({std::min(a, b), std::max(a, b)});
  return Groups(groups.begin(), groups.end());
}

Pairs truth_edges(const models::testing::FlowTableJobRun& run, bool last) {
  Pairs edges = last ? run.ring_edges_last : run.ring_edges_first;
  for (const auto& [a, b] : last ? run.pipeline_pairs_last : run.pipeline_pairs_first) {
    edges.insert({a, b});
    edges.insert({b, a});
  }
  return edges;
}

TEST(SkeletonInference, RecoversRingsAndPipelinePairsOfASimulatedJob) {
  const sim::EndpointId debug_from = 0 * 8 + 0, debug_to = 3 * 8 + 5;  // h0.nic0 -> h3.nic5, once
  const auto run = models::testing::run_flow_table_job(
      job_cluster(8), tp8_pp2_dp4(), 100 * kSecond, [&](sim::FlowEngine& engine, models::TrainingJob&) {
        engine.schedule_at(31 * kSecond, [&engine, debug_from, debug_to] {
          engine.start_transfer(debug_from, debug_to, 4e9, [](sim::Nanos) {});
        });
      });
  const sim::Topology t(job_cluster(8));
  SkeletonInference inference(&t, 3, 2 * sim::kMinute);
  int versions = 0;
  for (const telemetry::Batch& b : run.batches) {
    for (const auto& r : b.records())
      if (r.has_flow_table()) inference.add(r.flow_table());
    for (const auto& f : b.flow_table_runs()) inference.add(f);
    if (b.until_ns() % (30 * kSecond) == 0) versions += inference.refresh(b.until_ns()) ? 1 : 0;
  }
  EXPECT_GE(versions, 1);
  EXPECT_EQ(inference.edges(), truth_edges(run, false));
  EXPECT_FALSE(inference.edges().count({debug_from, debug_to}));
  const Groups expected = truth(run, false);
  EXPECT_EQ(expected.size(), 16u + 32u);  // 16 rings of 4 RNICs, 32 pipeline pairs
  EXPECT_EQ(inference.groups(), expected);
}

TEST(SkeletonInference, RestartOnASpareMakesANewVersionWithTheSparesEndpoints) {
  models::JobSpec spec = tp8_pp2_dp4();
  spec.spare_hosts = 1;
  const sim::Nanos isolation = 60 * kSecond + 300 * sim::kMillisecond;
  const auto run = models::testing::run_flow_table_job(
      job_cluster(9), spec, 330 * kSecond, [&](sim::FlowEngine& engine, models::TrainingJob& job) {
        engine.schedule_at(isolation, [&job] { job.isolate({"h2.gpu0"}); });
      });
  ASSERT_EQ(std::count(run.hosts_last.begin(), run.hosts_last.end(), 2), 0);
  ASSERT_EQ(std::count(run.hosts_last.begin(), run.hosts_last.end(), 8), 1);  // the spare
  const sim::Topology t(job_cluster(9));
  SkeletonInference inference(&t, 3, 60 * kSecond);
  int version_before = -1;
  Groups groups_before;
  for (const telemetry::Batch& b : run.batches) {
    for (const auto& r : b.records())
      if (r.has_flow_table()) inference.add(r.flow_table());
    for (const auto& f : b.flow_table_runs()) inference.add(f);
    if (b.until_ns() % (10 * kSecond) == 0) inference.refresh(b.until_ns());
    if (b.until_ns() == isolation - 300 * sim::kMillisecond) {
      version_before = inference.version();
      groups_before = inference.groups();
    }
  }
  EXPECT_GE(version_before, 1);
  EXPECT_EQ(groups_before, truth(run, false));
  EXPECT_GT(inference.version(), version_before);
  auto uses_host = [&t](const Groups& groups, int host) {
    for (const auto& g : groups)
      for (sim::EndpointId e : g)
        if (t.host_of(e) == host) return true;
    return false;
  };
  EXPECT_FALSE(uses_host(groups_before, 8));
  EXPECT_TRUE(uses_host(inference.groups(), 8));
  EXPECT_FALSE(uses_host(inference.groups(), 2));  // aged out
  EXPECT_EQ(inference.groups(), truth(run, true));
  EXPECT_EQ(inference.edges(), truth_edges(run, true));
}

// With the scheduler's container stops, the isolated host's flows leave as
// soon as the skeleton changes, instead of lingering until they age out.
TEST(SkeletonInference, ContainerStopsRetireTheirFlowsAtOnce) {
  models::JobSpec spec = tp8_pp2_dp4();
  spec.spare_hosts = 1;
  const auto run = models::testing::run_flow_table_job(
      job_cluster(9), spec, 200 * kSecond, [&](sim::FlowEngine& engine, models::TrainingJob& job) {
        engine.schedule_at(60 * kSecond + 300 * sim::kMillisecond, [&job] { job.isolate({"h2.gpu0"}); });
      });
  const sim::Topology t(job_cluster(9));
  auto first_new_version = [&](bool with_containers) {
    SkeletonInference inference(&t, 3, 2 * sim::kMinute);
    int stops = 0;
    for (const telemetry::Batch& b : run.batches) {
      for (const auto& r : b.records()) {
        if (r.has_flow_table()) inference.add(r.flow_table());
        if (r.has_container() && with_containers) {
          stops += r.container().kind() == telemetry::ContainerEvent::STOP ? 1 : 0;
          inference.container_stopped(r.container());
        }
      }
      for (const auto& f : b.flow_table_runs()) inference.add(f);
      if (b.until_ns() % (10 * kSecond) == 0 && inference.refresh(b.until_ns()) && inference.version() == 2) {
        EXPECT_TRUE(!with_containers || stops >= 8) << stops << " containers stopped";
        return inference.groups();
      }
    }
    ADD_FAILURE() << "no second version";
    return Groups{};
  };
  auto uses_host = [&t](const Groups& groups, int host) {
    for (const auto& g : groups)
      for (sim::EndpointId e : g)
        if (t.host_of(e) == host) return true;
    return false;
  };
  const Groups with = first_new_version(true), without = first_new_version(false);
  EXPECT_EQ(with, truth(run, true));
  EXPECT_TRUE(uses_host(with, 8));
  EXPECT_FALSE(uses_host(with, 2));
  // From bursts alone the spare joins first; h2 is still there until it ages out.
  EXPECT_TRUE(uses_host(without, 8));
  EXPECT_TRUE(uses_host(without, 2));
}

}  // namespace
}  // namespace gauntlet::harness
