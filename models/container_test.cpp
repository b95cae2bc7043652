// Containers of a placement: what each holds, the vSwitch rules its
// workers' traffic needs, and how a restart re-places them.
#include "models/container.hpp"

#include <gtest/gtest.h>

#include <map>

#include "models/job_test_support.hpp"

namespace gauntlet::models {
namespace {

// Two pods of 8 hosts with 8 GPUs and 8 RNICs each.
sim::ClusterShape cluster() { return testing::rail_pods(2, 8); }

// tp8 pp2 dp4 on 8 hosts: a host holds one tensor-parallel group; its DP
// ring of 4 runs over 4 hosts of one stage, and each rank has one pipeline
// neighbour on the host of the other stage.
JobSpec job() {
  JobSpec j;
  j.name = "llm";
  j.gpus = 64;
  j.parallelism = {8, 2, 4, 1};
  return j;
}

const std::set<int> kNone;
const std::set<std::pair<int, int>> kNoGpus;

TEST(Containers, OnePerHostSlotHoldingItsGpusAndOneVfPerRnic) {
  const sim::Topology topology(cluster());
  const Placement placement(job(), topology);
  ContainerSet set("llm", topology, nullptr);
  set.start_all(5 * sim::kSecond, placement);

  ASSERT_EQ(set.lifetimes().size(), 8u);
  std::set<std::uint32_t> addresses;
  std::set<std::pair<int, int>> gpus;
  for (const Container& c : set.lifetimes()) {
    EXPECT_EQ(c.id, "llm/c" + std::to_string(c.slot) + ".0");
    EXPECT_EQ(c.host, c.slot);  // the job fills hosts 0..7
    EXPECT_EQ(c.gpus.size(), 8u);
    ASSERT_EQ(c.vfs.size(), 8u);
    for (std::size_t k = 0; k < c.vfs.size(); ++k) {
      EXPECT_EQ(c.vfs[k].rnic, topology.endpoint(c.host, static_cast<int>(k)));
      EXPECT_EQ(c.vfs[k].index, 0);
      EXPECT_EQ(set.attached_vf(c.vfs[k].rnic), &c.vfs[k]);
      addresses.insert(c.vfs[k].overlay_address);
    }
    for (int g : c.gpus) EXPECT_TRUE(gpus.insert({c.host, g}).second) << "GPU held twice";
    EXPECT_EQ(c.started_at, 5 * sim::kSecond);
    EXPECT_FALSE(c.stopped_at);
  }
  EXPECT_EQ(addresses.size(), 64u);
  EXPECT_EQ(overlay_address_text(ContainerSet::overlay_address(3, 2)), "10.0.3.3");
  EXPECT_EQ(set.attached_vf(topology.endpoint(8, 0)), nullptr);  // a spare host runs nothing
  EXPECT_EQ(set.container_of_gpu(2, 5, 5 * sim::kSecond)->id, "llm/c2.0");
  EXPECT_EQ(set.container_of_gpu(2, 5, sim::kSecond), nullptr);  // before it started
}

TEST(Containers, RulesCoverExactlyTheCrossHostPeersOfTheirWorkers) {
  const sim::Topology topology(cluster());
  const Placement placement(job(), topology);
  ContainerSet set("llm", topology, nullptr);
  set.start_all(0, placement);
  // Per RNIC: two DP ring neighbours (a ring of 4 has two) plus one
  // pipeline neighbour; tensor-parallel peers share the host and need none.
  for (const Container& c : set.lifetimes()) EXPECT_EQ(c.rules.size(), 8u * 3u) << c.id;

  // Rank 0 (h0.gpu0, stage 0, replica 0): ring neighbours replicas 1 and 3
  // of its stage (h1, h3), pipeline neighbour h4 (stage 1, replica 0).
  const sim::EndpointId own = topology.endpoint(0, 0);
  for (int peer_host : {1, 3, 4}) {
    const auto underlay = set.rule(own, ContainerSet::overlay_address(peer_host, 0));
    ASSERT_TRUE(underlay) << "h" << peer_host;
    EXPECT_EQ(*underlay, topology.endpoint(peer_host, 0));
  }
  EXPECT_FALSE(set.rule(own, ContainerSet::overlay_address(2, 0)));  // replica 2: not adjacent in the ring
  EXPECT_FALSE(set.rule(own, ContainerSet::overlay_address(1, 1)));  // another rail's rank: another ring
  EXPECT_FALSE(set.rule(topology.endpoint(8, 0), ContainerSet::overlay_address(1, 0)));  // no container there
}

TEST(Containers, ExpertGroupsNeedRulesToEveryMember) {
  const sim::Topology topology(cluster());
  JobSpec spec = job();
  spec.parallelism = {8, 1, 8, 4};  // 8 hosts of one stage; all-to-all inside blocks of 4 replicas
  const Placement placement(spec, topology);
  ContainerSet set("moe", topology, nullptr);
  set.start_all(0, placement);
  // h1's rank: ring neighbours h0 and h2, all-to-all with its block h0, h2, h3.
  const sim::EndpointId own = topology.endpoint(1, 0);
  for (int peer : {0, 2, 3}) EXPECT_TRUE(set.rule(own, ContainerSet::overlay_address(peer, 0))) << peer;
  EXPECT_FALSE(set.rule(own, ContainerSet::overlay_address(5, 0)));
  // Replica 0's ring predecessor is replica 7 (another block).
  EXPECT_TRUE(set.rule(topology.endpoint(0, 0), ContainerSet::overlay_address(7, 0)));
}

TEST(Containers, ARestartStopsEveryContainerAndStartsTheNextIncarnationOnTheNewHosts) {
  const sim::Topology topology(cluster());
  sim::TelemetryBus bus;
  ContainerSet set("llm", topology, &bus);
  set.start_all(0, Placement(job(), topology));
  const std::set<std::pair<int, int>> failed_gpus = {{3, 2}};
  const std::set<int> isolated = {6};
  set.stop_all(100 * sim::kSecond, StopReason::restart, {kNone, failed_gpus, isolated});
  EXPECT_TRUE(set.live_at(100 * sim::kSecond).empty());
  EXPECT_EQ(set.attached_vf(topology.endpoint(0, 0)), nullptr);
  EXPECT_FALSE(set.rule(topology.endpoint(0, 0), ContainerSet::overlay_address(1, 0)));  // withdrawn

  // Spares 8 and 9 take the slots of h3 and h6.
  const std::vector<int> hosts = {0, 1, 2, 8, 4, 5, 9, 7};
  set.start_all(400 * sim::kSecond, Placement(job(), topology, hosts));
  ASSERT_EQ(set.lifetimes().size(), 16u);
  std::map<std::string, std::string> reasons;
  for (const Container& c : set.lifetimes())
    if (c.stopped_at) reasons[c.id] = std::string(stop_reason_name(*c.stop_reason));
  EXPECT_EQ(reasons["llm/c3.0"], "gpu_failed");
  EXPECT_EQ(reasons["llm/c6.0"], "isolated");
  EXPECT_EQ(reasons["llm/c0.0"], "restart");
  const std::vector<const Container*> live = set.live_at(400 * sim::kSecond);
  ASSERT_EQ(live.size(), 8u);
  for (const Container* c : live) {
    EXPECT_EQ(c->incarnation, 1);
    EXPECT_EQ(c->host, hosts[static_cast<std::size_t>(c->slot)]);
    EXPECT_EQ(c->id, "llm/c" + std::to_string(c->slot) + ".1");
  }
  // The slot keeps its overlay addresses; the peers' rules now lead to the spare.
  EXPECT_EQ(set.live_on_host(8)->vfs[0].overlay_address, ContainerSet::overlay_address(3, 0));
  EXPECT_EQ(*set.rule(topology.endpoint(0, 0), ContainerSet::overlay_address(3, 0)), topology.endpoint(8, 0));
  EXPECT_EQ(set.live_on_host(3), nullptr);

  // The scheduler published 8 starts, 8 stops and 8 starts, in that order,
  // naming hosts, GPUs and RNICs but nothing of the parallel layout.
  const telemetry::Batch batch = bus.drain(400 * sim::kSecond);
  ASSERT_EQ(batch.records_size(), 24);
  int stops = 0;
  for (int i = 0; i < batch.records_size(); ++i) {
    const telemetry::ContainerEvent& e = batch.records(i).container();
    const bool stop = i >= 8 && i < 16;
    EXPECT_EQ(e.kind(), stop ? telemetry::ContainerEvent::STOP : telemetry::ContainerEvent::START);
    EXPECT_EQ(e.vfs_size(), 8);
    EXPECT_EQ(e.gpus_size(), 8);
    EXPECT_EQ(e.vfs(0).rnic(), e.host() + ".nic0");
    stops += stop;
    if (e.container() == "llm/c3.0" && stop) {
      EXPECT_EQ(e.reason(), "gpu_failed");
    }
    const std::string text = e.DebugString();
    for (const char* leak : {"dp.", "pp.", "tp.", "rank"}) EXPECT_EQ(text.find(leak), std::string::npos) << text;
  }
  EXPECT_EQ(stops, 8);
  EXPECT_EQ(batch.records(16).container().host(), "h0");
  EXPECT_EQ(batch.records(19).container().host(), "h8");
}

TEST(Containers, AVfIsFreedWhenItsContainerStopsAndTheLowestFreeOneIsTaken) {
  const sim::Topology topology(cluster());
  ContainerSet set("llm", topology, nullptr);
  const Placement placement(job(), topology);
  set.start_all(0, placement);
  set.stop_all(sim::kSecond, StopReason::restart, {kNone, kNoGpus, kNone});
  set.start_all(2 * sim::kSecond, placement);
  for (const Container* c : set.live_at(2 * sim::kSecond))
    for (const VirtualFunction& vf : c->vfs) EXPECT_EQ(vf.index, 0);
  // A container stopped twice is stopped once.
  set.stop_all(3 * sim::kSecond, StopReason::restart, {kNone, kNoGpus, kNone});
  set.stop_all(4 * sim::kSecond, StopReason::isolated, {kNone, kNoGpus, kNone});
  for (const Container& c : set.lifetimes()) EXPECT_NE(*c.stopped_at, 4 * sim::kSecond);
}

}  // namespace
}  // namespace gauntlet::models
