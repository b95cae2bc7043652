#include "harness/detectors/skeleton_inference.hpp"

#include <gtest/gtest.h>

#include "harness/detectors/skeleton_detector.hpp"

namespace gauntlet::harness {
namespace {

using sim::kSecond;

// 4 hosts x 2 GPUs x 2 RNICs, two pods: GPU K of each host uses RNIC K.
sim::Topology topology() {
  sim::ClusterShape shape;
  shape.spines = 2;
  shape.leaves = 4;
  shape.hosts = 4;
  shape.gpus_per_host = 2;
  shape.rnics_per_host = 2;
  return sim::Topology(shape);
}

std::string gpu(int host, int k) { return "h" + std::to_string(host) + ".gpu" + std::to_string(k); }

telemetry::CollectiveRecord edge(const std::string& comm, const std::string& worker, const std::string& peer,
                                 std::uint64_t sequence) {
  telemetry::CollectiveRecord c;
  c.set_communicator(comm);
  c.set_worker(worker);
  c.set_peer(peer);
  c.set_op("allreduce");
  c.set_algorithm("ring");
  c.set_sequence(sequence);
  return c;
}

// One iteration of a DP ring over hosts 0..3 on GPU k: h0 -> h1 -> h2 -> h3 -> h0.
void ring_iteration(SkeletonInference& inference, int k, std::uint64_t sequence, sim::Nanos at) {
  for (int h = 0; h < 4; ++h)
    inference.add(edge("dp.tp" + std::to_string(k), gpu(h, k), gpu((h + 1) % 4, k), sequence), at);
}

TEST(SkeletonInference, RecoversRingPairsAndIgnoresOneOffTraffic) {
  const sim::Topology t = topology();
  SkeletonInference inference(&t, 3, 60 * kSecond);
  for (std::uint64_t i = 0; i < 4; ++i) {
    ring_iteration(inference, 0, i, static_cast<sim::Nanos>(i) * 3 * kSecond);
    ring_iteration(inference, 1, i, static_cast<sim::Nanos>(i) * 3 * kSecond);
  }
  // A one-off transfer (a debug send between unrelated RNICs) seen once.
  inference.add(edge("debug", gpu(0, 0), gpu(3, 1), 2), 7 * kSecond);
  ASSERT_TRUE(inference.refresh(10 * kSecond));
  EXPECT_EQ(inference.version(), 1);

  std::set<std::pair<sim::EndpointId, sim::EndpointId>> expected;
  for (int k = 0; k < 2; ++k)
    for (int h = 0; h < 4; ++h) expected.insert({t.endpoint(h, k), t.endpoint((h + 1) % 4, k)});
  EXPECT_EQ(inference.edges(), expected);
  ASSERT_EQ(inference.groups().size(), 2u);
  EXPECT_EQ(inference.groups()[0], (std::vector<sim::EndpointId>{0, 2, 4, 6}));  // the nic0s
  EXPECT_EQ(inference.groups()[1], (std::vector<sim::EndpointId>{1, 3, 5, 7}));
  EXPECT_FALSE(inference.edges().count({t.endpoint(0, 0), t.endpoint(3, 1)}));
  // Nothing changed: the version stays.
  EXPECT_FALSE(inference.refresh(11 * kSecond));
  EXPECT_EQ(inference.version(), 1);
}

TEST(SkeletonInference, EdgeBelowRepeatThresholdStaysOut) {
  const sim::Topology t = topology();
  SkeletonInference inference(&t, 3, 60 * kSecond);
  ring_iteration(inference, 0, 0, 0);
  ring_iteration(inference, 0, 1, 3 * kSecond);
  EXPECT_FALSE(inference.refresh(4 * kSecond));  // two iterations are not yet a period
  EXPECT_TRUE(inference.edges().empty());
  // The same record reported twice in one iteration is still one iteration.
  ring_iteration(inference, 0, 1, 3 * kSecond);
  EXPECT_FALSE(inference.refresh(4 * kSecond));
  ring_iteration(inference, 0, 2, 6 * kSecond);
  EXPECT_TRUE(inference.refresh(7 * kSecond));
  EXPECT_EQ(inference.edges().size(), 4u);
}

TEST(SkeletonInference, IntraHostEdgesCarryNoRnicTraffic) {
  const sim::Topology t = topology();
  SkeletonInference inference(&t, 1, 60 * kSecond);
  inference.add(edge("tp", gpu(0, 0), gpu(0, 1), 0), 0);
  EXPECT_FALSE(inference.refresh(kSecond));
}

TEST(SkeletonInference, SteadyRunCountsItsIterations) {
  const sim::Topology t = topology();
  SkeletonInference inference(&t, 3, 60 * kSecond);
  for (int h = 0; h < 4; ++h) inference.add(edge("dp", gpu(h, 0), gpu((h + 1) % 4, 0), 5), 0, 10, 27 * kSecond);
  ASSERT_TRUE(inference.refresh(30 * kSecond));
  EXPECT_EQ(inference.edges().size(), 4u);
}

TEST(SkeletonInference, ReplacedContainersMakeANewVersion) {
  const sim::Topology t = topology();
  SkeletonInference inference(&t, 3, 20 * kSecond);
  for (std::uint64_t i = 0; i < 3; ++i) ring_iteration(inference, 0, i, static_cast<sim::Nanos>(i) * kSecond);
  ASSERT_TRUE(inference.refresh(3 * kSecond));
  EXPECT_EQ(inference.version(), 1);
  // After a restart the job's ring runs on the nic1s: the old edges go stale.
  for (std::uint64_t i = 10; i < 13; ++i)
    ring_iteration(inference, 1, i, 60 * kSecond + static_cast<sim::Nanos>(i) * kSecond);
  ASSERT_TRUE(inference.refresh(80 * kSecond));
  EXPECT_EQ(inference.version(), 2);
  ASSERT_EQ(inference.groups().size(), 1u);
  EXPECT_EQ(inference.groups()[0], (std::vector<sim::EndpointId>{1, 3, 5, 7}));
  // While nothing talks (the job is down) the last skeleton stays.
  EXPECT_FALSE(inference.refresh(300 * kSecond));
  EXPECT_EQ(inference.version(), 2);
  EXPECT_EQ(inference.edges().size(), 4u);
}

}  // namespace
}  // namespace gauntlet::harness
