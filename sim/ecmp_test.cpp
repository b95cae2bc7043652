#include "sim/ecmp.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace gauntlet::sim {
namespace {

// Two leaves, eight spines, one RNIC on each leaf.
Topology fabric() {
  ClusterShape s;
  s.spines = 8;
  s.leaves = 2;
  s.hosts = 2;
  s.gpus_per_host = 1;
  s.rnics_per_host = 1;
  s.rail_optimized = false;
  return Topology(s);
}

TEST(Ecmp, TheConnectionsOwnSourcePortKeepsItsSpine) {
  const Topology t = fabric();
  const EcmpRouter router(t, 11);
  for (EndpointId src : {0, 1}) {
    const EndpointId dst = 1 - src;
    const std::uint16_t port = connection_source_port(src, dst);
    EXPECT_GE(port, 0xC000);  // mlx5's RoCE source port range
    EXPECT_EQ(router.spine_for(src, dst, port), router.spine_for(src, dst));
    EXPECT_EQ(router.route(src, dst, port), router.route(src, dst));
  }
}

// Hashing on the source port spreads the flows of one RNIC pair over the
// spines: over the 16,384 ports of the RoCE range each of S spines takes a
// share within the binomial band of 1/S.
TEST(Ecmp, SourcePortsSpreadOnePairOverEverySpine) {
  const Topology t = fabric();
  const EcmpRouter router(t, 11);
  std::vector<int> per_spine(8, 0);
  constexpr int kPorts = 0x4000;
  for (int p = 0; p < kPorts; ++p) ++per_spine[static_cast<std::size_t>(router.spine_for(0, 1, 0xC000 + p))];
  const double mean = kPorts / 8.0, sd = std::sqrt(kPorts * (1.0 / 8) * (7.0 / 8));
  for (int count : per_spine) EXPECT_NEAR(count, mean, 5 * sd);
  // The route a port picks crosses that spine's two fabric links.
  for (int p = 0; p < 64; ++p) {
    const auto port = static_cast<std::uint16_t>(0xC000 + p);
    const int spine = router.spine_for(0, 1, port);
    const std::vector<LinkId> route = router.route(0, 1, port);
    ASSERT_EQ(route.size(), 4u);
    EXPECT_EQ(route[1], t.fabric_link(0, spine));
    EXPECT_EQ(route[2], t.fabric_link(1, spine));
  }
}

TEST(Ecmp, AnUnusableSpineTakesNoPort) {
  const Topology t = fabric();
  EcmpRouter router(t, 11);
  router.set_fabric_link_usable(1, 3, false);
  for (int p = 0; p < 4096; ++p) EXPECT_NE(router.spine_for(0, 1, static_cast<std::uint16_t>(0xC000 + p)), 3);
}

}  // namespace
}  // namespace gauntlet::sim
