// Congestion evidence: what switch queues add to a probe's round trip, and
// which fabric links late probes and grown queues name together.
#include "harness/detectors/skeleton_congestion.hpp"

#include <gtest/gtest.h>

#include "harness/detectors/small_topology_test_util.hpp"

namespace gauntlet::harness {
namespace {

telemetry::PortCounters port(const std::string& link, bool upward, double queue_bytes, std::uint64_t tx = 1000) {
  telemetry::PortCounters p;
  p.set_link(link);
  p.set_upward(upward);
  p.set_queue_depth(queue_bytes);
  p.set_tx_bytes(tx);
  return p;
}

TEST(LinkQueues, AQueuedByteWaitsItsSerializationTimeInTheLongerDirection) {
  const sim::Topology t = small_two_pod_topology();  // 400 Gb/s: 50 bytes a nanosecond
  LinkQueues q(&t);
  const int link = t.fabric_link(0, 1);
  q.add(port("leaf0~spine1", true, 0));
  q.add(port("leaf0~spine1", false, 0));
  EXPECT_EQ(q.added_wait(link), 0);
  // 25 KB toward the spine, 10 KB back: 0.5 us and 0.2 us of waiting.
  q.add(port("leaf0~spine1", true, 25000));
  q.add(port("leaf0~spine1", false, 10000));
  EXPECT_EQ(q.added_wait(link), 500);
  EXPECT_EQ(q.added_wait(t.fabric_link(0, 0)), 0);  // never reported: idle
}

TEST(LinkQueues, WaitIsCountedOverTheLeastQueueTheTrafficLeft) {
  const sim::Topology t = small_two_pod_topology();
  LinkQueues q(&t);
  const int link = t.fabric_link(2, 0);
  q.add(port("leaf2~spine0", true, 0, 0));   // idle: says nothing of the loaded floor
  q.add(port("leaf2~spine0", true, 10000));  // colliding flows keep 10 KB queued
  q.add(port("leaf2~spine0", true, 10000));
  EXPECT_EQ(q.added_wait(link), 0);
  q.add(port("leaf2~spine0", true, 60000));  // 50 KB more: 1 us
  EXPECT_EQ(q.added_wait(link), 1000);
}

// The ports carried traffic with empty queues before the queue grew.
void grow(LinkQueues& q, const std::string& link, double queue_bytes) {
  q.add(port(link, true, 0));
  q.add(port(link, true, queue_bytes));
}

TEST(LinkQueues, MovedTrafficQueuesFromWhereItRunsNow) {
  const sim::Topology t = small_two_pod_topology();
  LinkQueues q(&t);
  const int link = t.fabric_link(0, 0);
  q.add(port("leaf0~spine0", true, 0));
  q.add(port("leaf0~spine0", true, 20000));  // flows moved here collide: 0.4 us
  EXPECT_EQ(q.added_wait(link), 400);
  q.forget_floors();
  EXPECT_EQ(q.added_wait(link), 0);
  q.add(port("leaf0~spine0", true, 45000));  // 25 KB on top of the collision: 0.5 us
  EXPECT_EQ(q.added_wait(link), 500);
}

telemetry::ProbeResult probe(const std::vector<std::string>& path) {
  telemetry::ProbeResult p;
  p.set_src("h0.nic0");
  p.set_dst("h2.nic0");
  p.set_rtt_ns(16000);
  for (const std::string& c : path) p.add_path(c);
  return p;
}

TEST(RankCongestedLinks, TheSharedLinkWhoseQueueGrewNotItsPathPartner) {
  const sim::Topology t = small_two_pod_topology();
  LinkQueues q(&t);
  grow(q, "leaf0~spine1", 30000);  // 0.6 us of waiting
  grow(q, "leaf2~spine1", 2000);   // 0.04 us: below the margin
  const telemetry::ProbeResult a = probe({"h0.nic0~leaf0", "leaf0~spine1", "leaf2~spine1", "h2.nic0~leaf2"});
  const telemetry::ProbeResult b = probe({"h1.nic0~leaf0", "leaf0~spine1", "leaf2~spine1", "h3.nic0~leaf2"});
  const auto ranked = rank_congested_links(t, {&a, &b}, {}, q, 150, 2);
  ASSERT_EQ(ranked.size(), 1u);
  EXPECT_EQ(ranked.front().id, "leaf0~spine1");
  // One late probe is not enough.
  EXPECT_TRUE(rank_congested_links(t, {&a}, {}, q, 150, 2).empty());
  // Nor a queue under the margin.
  EXPECT_TRUE(rank_congested_links(t, {&a, &b}, {}, q, 700, 2).empty());
}

TEST(RankCongestedLinks, QueuesWithoutLateProbesAndLateProbesWithoutQueuesAreNotCongestion) {
  const sim::Topology t = small_two_pod_topology();
  LinkQueues q(&t);
  const telemetry::ProbeResult a = probe({"h0.nic0~leaf0", "leaf0~spine1", "leaf2~spine1", "h2.nic0~leaf2"});
  const telemetry::ProbeResult b = probe({"h1.nic0~leaf0", "leaf0~spine1", "leaf2~spine1", "h3.nic0~leaf2"});
  // A stale flow table's late probes: every queue empty.
  EXPECT_TRUE(rank_congested_links(t, {&a, &b}, {}, q, 150, 2).empty());
  // A grown queue that timely probes cross more often than late ones.
  grow(q, "leaf0~spine1", 30000);
  EXPECT_TRUE(rank_congested_links(t, {&a}, {&b, &b}, q, 150, 1).empty());
}

TEST(RankCongestedLinks, LinksOfOneSpineNameTheSpine) {
  const sim::Topology t = small_two_pod_topology();
  LinkQueues q(&t);
  grow(q, "leaf0~spine1", 30000);
  grow(q, "leaf2~spine1", 30000);
  const telemetry::ProbeResult a = probe({"h0.nic0~leaf0", "leaf0~spine1", "leaf2~spine1", "h2.nic0~leaf2"});
  const telemetry::ProbeResult b = probe({"h1.nic0~leaf0", "leaf0~spine1", "leaf2~spine1", "h3.nic0~leaf2"});
  const auto ranked = rank_congested_links(t, {&a, &b}, {}, q, 150, 2);
  ASSERT_EQ(ranked.size(), 3u);
  EXPECT_EQ(ranked[0].id, "spine1");
  EXPECT_GT(ranked[0].score, ranked[1].score);
}

}  // namespace
}  // namespace gauntlet::harness
