// Spare layouts: where spares sit, which one refills a broken host's slot,
// and what that does to the job's traffic.
#include "models/spare_layout.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "models/job_test_support.hpp"

namespace gauntlet::models {
namespace {

JobSpec ring_job(int hosts, int spares, SpareLayout layout) {
  JobSpec j;
  j.gpus = 8 * hosts;
  j.parallelism = {8, 1, hosts, 1};
  j.compute_per_iteration = 2 * sim::kSecond;
  j.gradient_bytes = 1'000'000'000;
  j.checkpoint_interval = 5 * sim::kMinute;
  j.checkpoint_cost = 0;
  j.collective_timeout = 3 * sim::kMinute;
  j.restart_cost = 2 * sim::kMinute;
  j.spare_hosts = spares;
  j.spare_layout = layout;
  return j;
}

TEST(SpareLayout, PerPodSetsAsideTheLastHostsOfEveryPod) {
  const sim::Topology topology(testing::rail_pods(4, 10));
  const HostPlan plan = plan_hosts(ring_job(32, 8, SpareLayout::per_pod), topology);
  EXPECT_EQ(plan.spares, (std::vector<int>{8, 9, 18, 19, 28, 29, 38, 39}));
  ASSERT_EQ(plan.job_hosts.size(), 32u);
  for (int h : plan.job_hosts) EXPECT_LT(h % 10, 8);

  const HostPlan tail = plan_hosts(ring_job(32, 8, SpareLayout::tail), topology);
  EXPECT_EQ(tail.job_hosts.front(), 0);
  EXPECT_EQ(tail.job_hosts.back(), 31);
  EXPECT_EQ(tail.spares, (std::vector<int>{32, 33, 34, 35, 36, 37, 38, 39}));

  EXPECT_THROW(plan_hosts(ring_job(36, 8, SpareLayout::per_pod), topology), std::invalid_argument);
}

TEST(SpareLayout, PerPodRefillsFromTheBrokenHostsPodThenTheNearest) {
  const sim::Topology topology(testing::rail_pods(4, 10));
  const std::vector<int> pool = {8, 9, 18, 19, 28, 29, 38, 39};
  auto all = [](int) { return true; };
  EXPECT_EQ(pool[*pick_spare(pool, 13, topology, SpareLayout::per_pod, all)], 18);
  EXPECT_EQ(pool[*pick_spare(pool, 35, topology, SpareLayout::per_pod, all)], 38);
  // Pod 1's spares are gone: pods 0 and 2 are equally near; the lower host wins.
  auto not_pod1 = [](int h) { return h / 10 != 1; };
  EXPECT_EQ(pool[*pick_spare(pool, 13, topology, SpareLayout::per_pod, not_pod1)], 8);
  // tail takes the lowest usable spare wherever the broken host is.
  EXPECT_EQ(pool[*pick_spare(pool, 35, topology, SpareLayout::tail, all)], 8);
  EXPECT_FALSE(pick_spare(pool, 13, topology, SpareLayout::per_pod, [](int) { return false; }));
  EXPECT_EQ(spare_layout_from_name("per_pod"), SpareLayout::per_pod);
  EXPECT_FALSE(spare_layout_from_name("nearby"));
}

// Host 3 loses a GPU for good at 7 minutes; the job restarts on a spare.
testing::JobReport run_with_broken_host(const sim::ClusterShape& shape, const JobSpec& spec) {
  constexpr sim::Nanos kFail = 7 * sim::kMinute;
  return testing::run_job(shape, spec, 30 * sim::kMinute, true, [](testing::JobHarness& h) {
    TrainingJob* job = &h.job;
    h.engine.schedule_at(kFail, [job] { job->fail_gpu(3, 2); });
    h.job.set_change_horizon(
        [&engine = h.engine] { return engine.now() < kFail ? kFail : std::numeric_limits<sim::Nanos>::max(); });
  });
}

TEST(SpareLayout, ASpareInTheSamePodKeepsTheRingUnderItsLeaves) {
  const sim::ClusterShape shape = testing::rail_pods(2, 6);
  const sim::Topology topology(shape);
  auto crosses_pods = [&](const testing::JobReport& r) {
    for (auto [a, b] : r.talking)
      if (topology.pod_of_host(topology.host_of(a)) != topology.pod_of_host(topology.host_of(b))) return true;
    return false;
  };

  // Five job hosts and one spare in each pod: host 3's slot goes to host 5.
  const testing::JobReport near = run_with_broken_host(shape, ring_job(5, 2, SpareLayout::per_pod));
  ASSERT_EQ(near.spares_used, 1);
  EXPECT_EQ(near.hosts[3], 5);
  EXPECT_FALSE(crosses_pods(near));
  // Same leaves, same rail rings: the iteration after the restart takes as
  // long as the first one.
  EXPECT_EQ(near.timeline.back().duration, near.timeline.front().duration);

  // The job fills pod 0 and its tail spare sits in pod 1: the ring now
  // leaves the pod on every rail.
  const testing::JobReport far = run_with_broken_host(shape, ring_job(6, 1, SpareLayout::tail));
  ASSERT_EQ(far.spares_used, 1);
  EXPECT_EQ(far.hosts[3], 6);
  EXPECT_TRUE(crosses_pods(far));
}

}  // namespace
}  // namespace gauntlet::models
