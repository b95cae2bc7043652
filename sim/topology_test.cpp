#include "sim/topology.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

namespace gauntlet::sim {
namespace {

ClusterShape rail_shape() {
  ClusterShape s;
  s.spines = 4;
  s.leaves = 16;
  s.hosts = 16;
  s.gpus_per_host = 8;
  s.rnics_per_host = 8;
  s.rail_optimized = true;
  return s;
}

TEST(Topology, RailOptimizedPutsNicKOfAPodOnRailLeafK) {
  Topology t(rail_shape());
  EXPECT_EQ(t.endpoints(), 128);
  EXPECT_EQ(t.leaf_of(t.endpoint(0, 3)), 3);
  EXPECT_EQ(t.leaf_of(t.endpoint(7, 3)), 3);
  EXPECT_EQ(t.leaf_of(t.endpoint(8, 3)), 11);  // second pod
  EXPECT_EQ(t.leaf_of(t.endpoint(15, 7)), 15);
}

TEST(Topology, PlainAttachmentPutsAllNicsOfAHostOnOneLeaf) {
  ClusterShape s = rail_shape();
  s.rail_optimized = false;
  s.leaves = 4;
  Topology t(s);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(t.leaf_of(t.endpoint(5, k)), 1);
}

TEST(Topology, LinkNamesMatchTheComponentGrammar) {
  Topology t(rail_shape());
  EXPECT_EQ(t.link_name(t.host_link(t.endpoint(12, 3))), "h12.nic3~leaf11");
  EXPECT_EQ(t.link_name(t.fabric_link(3, 1)), "leaf3~spine1");
  EXPECT_EQ(t.link_of(*ComponentId::parse("leaf3~spine1")), t.fabric_link(3, 1));
  EXPECT_FALSE(t.link_of(*ComponentId::parse("h12.nic3~leaf3")));  // h12.nic3 sits on leaf11
  EXPECT_DOUBLE_EQ(t.link_bytes_per_second(0), 50e9);
}

TEST(Topology, ContainsChecksRanges) {
  Topology t(rail_shape());
  EXPECT_TRUE(t.contains(*ComponentId::parse("h15.gpu7")));
  EXPECT_FALSE(t.contains(*ComponentId::parse("h16")));
  EXPECT_FALSE(t.contains(*ComponentId::parse("h0.nic8")));
  EXPECT_FALSE(t.contains(*ComponentId::parse("spine4")));
  auto names = t.component_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "h3.nic2.ft"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "leaf15~spine3"), names.end());
}

TEST(Topology, RejectsUnwirableShapes) {
  ClusterShape s = rail_shape();
  s.leaves = 12;  // not a multiple of 8 rails
  EXPECT_THROW(Topology{s}, std::invalid_argument);
  s = rail_shape();
  s.rnics_per_host = 0;
  EXPECT_THROW(Topology{s}, std::invalid_argument);
}

TEST(Topology, RefusesCountsThatCannotBeNumbered) {
  // 300M hosts x 8 RNICs once wrapped int and aborted in a vector resize.
  ClusterShape s = rail_shape();
  s.hosts = 300'000'000;
  EXPECT_THROW(Topology{s}, std::invalid_argument);
  s = rail_shape();
  s.leaves = 80'000;
  s.spines = 80'000;
  s.rail_optimized = false;
  EXPECT_THROW(Topology{s}, std::invalid_argument);
}

}  // namespace
}  // namespace gauntlet::sim
