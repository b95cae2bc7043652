#include "harness/detectors/skeleton_inference.hpp"

#include <gtest/gtest.h>

#include "harness/detectors/small_topology_test_util.hpp"
#include "sim/component_id.hpp"

namespace gauntlet::harness {
namespace {

using sim::kSecond;
using Pairs = std::set<std::pair<sim::EndpointId, sim::EndpointId>>;
using Groups = std::vector<std::vector<sim::EndpointId>>;

sim::Topology small_topology() { return small_two_pod_topology(); }

std::string table(const sim::Topology& t, sim::EndpointId e) {
  return sim::ComponentId::make_flow_table(t.host_of(e), t.nic_of(e)).str();
}
std::string nic(const sim::Topology& t, sim::EndpointId e) {
  return sim::ComponentId::make_nic(t.host_of(e), t.nic_of(e)).str();
}

// One table's counters for the second ending at `second`.
telemetry::FlowTableSample sample(const sim::Topology& t, sim::EndpointId from, const std::vector<sim::EndpointId>& to,
                                  long long second) {
  telemetry::FlowTableSample s;
  s.set_table(table(t, from));
  s.set_time_ns(second * kSecond);
  for (sim::EndpointId e : to) {
    auto* entry = s.add_entries();
    entry->set_peer(nic(t, e));
    entry->set_bytes(1'000'000);
    entry->set_packets(245);
  }
  return s;
}

// Iterations of 8 s: rings h0 -> h1 -> h2 -> h3 -> h0 on each rail burst in
// the sixth second of every iteration, and a pipeline-like pair on rail 0
// (h0 <-> h2) in its first.
void iterations(SkeletonInference& inference, const sim::Topology& t, int first, int count) {
  for (int i = first; i < first + count; ++i) {
    const long long start = 8LL * i;
    inference.add(sample(t, t.endpoint(0, 0), {t.endpoint(2, 0)}, start + 1));
    inference.add(sample(t, t.endpoint(2, 0), {t.endpoint(0, 0)}, start + 1));
    for (int k = 0; k < 2; ++k)
      for (int h = 0; h < 4; ++h) inference.add(sample(t, t.endpoint(h, k), {t.endpoint((h + 1) % 4, k)}, start + 6));
  }
}

TEST(SkeletonInference, GroupsFlowsByBurstSignatureAndConnectivity) {
  const sim::Topology t = small_topology();
  SkeletonInference inference(&t, 3, 60 * kSecond);
  iterations(inference, t, 0, 4);
  // A one-off transfer between unrelated RNICs, and a flow that bursts three
  // times at no common period.
  inference.add(sample(t, t.endpoint(0, 1), {t.endpoint(3, 0)}, 10));
  for (long long s : {3, 6, 15}) inference.add(sample(t, t.endpoint(1, 1), {t.endpoint(2, 0)}, s));
  ASSERT_TRUE(inference.refresh(31 * kSecond));
  EXPECT_EQ(inference.version(), 1);

  Pairs expected{{t.endpoint(0, 0), t.endpoint(2, 0)}, {t.endpoint(2, 0), t.endpoint(0, 0)}};
  for (int k = 0; k < 2; ++k)
    for (int h = 0; h < 4; ++h) expected.insert({t.endpoint(h, k), t.endpoint((h + 1) % 4, k)});
  EXPECT_EQ(inference.edges(), expected);
  // The two rings, and the pair apart from the ring its ends are also in.
  EXPECT_EQ(inference.groups(), (Groups{{0, 2, 4, 6}, {0, 4}, {1, 3, 5, 7}}));
  EXPECT_FALSE(inference.refresh(32 * kSecond));
  EXPECT_EQ(inference.version(), 1);
}

// NCCL's fallback off a dead RNIC: its ring peer starts receiving from a
// sibling RNIC of the same host the moment it stops sending.
TEST(SkeletonInference, AnRnicWhosePeerASiblingTookOverFailedOver) {
  const sim::Topology t = small_topology();
  SkeletonInference inference(&t, 3, 60 * kSecond);
  iterations(inference, t, 0, 4);
  ASSERT_TRUE(inference.refresh(31 * kSecond));
  const sim::EndpointId dead = t.endpoint(1, 1), fallback = t.endpoint(1, 0), peer = t.endpoint(2, 1);
  for (sim::EndpointId e = 0; e < t.endpoints(); ++e) EXPECT_FALSE(inference.failed_over(e)) << e;
  // From the fifth iteration h1.nic1's ring edge leaves from h1.nic0.
  for (int i = 4; i < 7; ++i) {
    const long long start = 8LL * i;
    for (int h = 0; h < 4; ++h) {
      if (h != 1) inference.add(sample(t, t.endpoint(h, 1), {t.endpoint((h + 1) % 4, 1)}, start + 6));
      if (h != 1) inference.add(sample(t, t.endpoint(h, 0), {t.endpoint((h + 1) % 4, 0)}, start + 6));
    }
    inference.add(sample(t, fallback, {t.endpoint(2, 0), peer}, start + 6));
  }
  EXPECT_TRUE(inference.failed_over(dead));
  EXPECT_FALSE(inference.failed_over(fallback));
  EXPECT_FALSE(inference.failed_over(t.endpoint(0, 1)));
  // Back up: it sends again, so it no longer counts as failed over.
  inference.add(sample(t, dead, {peer}, 8LL * 7 + 6));
  EXPECT_FALSE(inference.failed_over(dead));
}

TEST(SkeletonInference, TwoBurstsAreNotYetAPeriod) {
  const sim::Topology t = small_topology();
  SkeletonInference inference(&t, 3, 60 * kSecond);
  iterations(inference, t, 0, 2);
  EXPECT_FALSE(inference.refresh(15 * kSecond));
  EXPECT_TRUE(inference.edges().empty());
  // Bursts one second apart are one long burst, not a period.
  for (long long s = 20; s < 30; ++s) inference.add(sample(t, t.endpoint(1, 0), {t.endpoint(3, 0)}, s));
  EXPECT_FALSE(inference.refresh(31 * kSecond));
  iterations(inference, t, 2, 1);
  EXPECT_TRUE(inference.refresh(40 * kSecond));
  EXPECT_EQ(inference.edges().size(), 10u);
}

TEST(SkeletonInference, AStretchCountsItsRepeats) {
  const sim::Topology t = small_topology();
  SkeletonInference inference(&t, 3, 60 * kSecond);
  telemetry::FlowTableRun run;
  run.set_period_ns(2500 * sim::kMillisecond);
  run.set_repeats(10);
  for (int h = 0; h < 4; ++h) {
    auto* b = run.add_bursts();
    b->set_table(table(t, t.endpoint(h, 0)));
    b->set_peer(nic(t, t.endpoint((h + 1) % 4, 0)));
    b->set_from_ns(2 * kSecond + 100 * sim::kMillisecond);
    b->set_to_ns(2 * kSecond + 130 * sim::kMillisecond);
    b->set_bytes(750'000'000);
  }
  inference.add(run);
  ASSERT_TRUE(inference.refresh(30 * kSecond));
  EXPECT_EQ(inference.edges().size(), 4u);
  EXPECT_EQ(inference.groups(), (Groups{{0, 2, 4, 6}}));
  // Nothing newer bursts (the job is down): nothing ages, the skeleton stays.
  EXPECT_FALSE(inference.refresh(300 * kSecond));
  EXPECT_EQ(inference.edges().size(), 4u);
  // The job comes back on the nic1s: once they burst periodically the nic0
  // flows, silent for over a minute of others' bursts, age out.
  for (long long s : {400, 404, 408, 412})
    for (int h = 0; h < 4; ++h) inference.add(sample(t, t.endpoint(h, 1), {t.endpoint((h + 1) % 4, 1)}, s));
  ASSERT_TRUE(inference.refresh(413 * kSecond));
  EXPECT_EQ(inference.version(), 2);
  EXPECT_EQ(inference.groups(), (Groups{{1, 3, 5, 7}}));
}

}  // namespace
}  // namespace gauntlet::harness
