// Underlay localization helpers: the probes that split tied suspects and the
// host that explains its own host links failing together.
#include "harness/detectors/skeleton_localize.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "harness/detectors/small_topology_test_util.hpp"
#include "sim/component_id.hpp"

namespace gauntlet::harness {
namespace {

sim::Topology two_pods() { return small_two_pod_topology(); }

std::string host_link(const sim::Topology& t, int endpoint) { return t.link_name(t.host_link(endpoint)); }

TEST(IdentifyingProbes, EachTiedHostLinkIsProbedOverItselfAndNoOtherTiedLink) {
  const sim::Topology t = two_pods();
  const int a = t.endpoint(0, 0), b = t.endpoint(2, 0);
  ASSERT_NE(t.leaf_of(a), t.leaf_of(b));
  const std::vector<std::string> tied{host_link(t, a), host_link(t, b)};
  const std::vector<PlannedProbe> probes = identifying_probes(t, tied, {}, 3);
  ASSERT_FALSE(probes.empty());
  std::set<int> probed;
  for (const PlannedProbe& p : probes) {
    // Under one leaf a probe's path is its two host links: one tied, one not.
    EXPECT_EQ(t.leaf_of(p.src), t.leaf_of(p.dst));
    EXPECT_NE(t.host_of(p.src), t.host_of(p.dst));
    EXPECT_TRUE(p.dst == a || p.dst == b);
    EXPECT_TRUE(p.src != a && p.src != b);
    EXPECT_FALSE(p.overlay);
    probed.insert(p.dst);
  }
  EXPECT_EQ(probed, (std::set<int>{a, b}));
}

TEST(IdentifyingProbes, TiedFabricLinksAreSplitByLeavesOnlyOneOfThemTouches) {
  const sim::Topology t = two_pods();
  // Every ring path over leaf0~spine1 also crosses leaf2~spine1: from the
  // ring's probes alone the two tie.
  const std::vector<std::string> tied{t.link_name(t.fabric_link(0, 1)), t.link_name(t.fabric_link(2, 1))};
  const std::vector<PlannedProbe> probes = identifying_probes(t, tied, {}, 2);
  ASSERT_FALSE(probes.empty());
  for (const PlannedProbe& p : probes) {
    const int from = t.leaf_of(p.src), to = t.leaf_of(p.dst);
    EXPECT_TRUE(from == 0 || from == 2);
    EXPECT_TRUE(to == 1 || to == 3) << "a probe from leaf" << from << " to leaf" << to << " crosses both";
  }
}

TEST(IdentifyingProbes, AKnownRouteOverOneTiedLinkOnlyIsUsed) {
  const sim::Topology t = two_pods();
  const int l01 = t.fabric_link(0, 1), l21 = t.fabric_link(2, 1), l11 = t.fabric_link(1, 1);
  const int src = t.endpoint(0, 0), dst = t.endpoint(1, 1), both_src = t.endpoint(1, 0), both_dst = t.endpoint(3, 0);
  const LearnedRoutes routes{
      {{src, dst}, {t.host_link(src), l01, l11, t.host_link(dst)}},
      {{both_src, both_dst}, {t.host_link(both_src), l01, l21, t.host_link(both_dst)}},
  };
  const std::vector<PlannedProbe> probes = identifying_probes(t, {t.link_name(l01), t.link_name(l21)}, routes, 1);
  ASSERT_FALSE(probes.empty());
  EXPECT_EQ(probes.front().src, src);
  EXPECT_EQ(probes.front().dst, dst);
  for (const PlannedProbe& p : probes) EXPECT_FALSE(p.src == both_src && p.dst == both_dst);
}

TEST(CommonHost, HostLinksOfSeveralRnicsOfOneHostAreThatHost) {
  const sim::Topology t = two_pods();
  EXPECT_EQ(common_host({host_link(t, t.endpoint(2, 0)), host_link(t, t.endpoint(2, 1))}), 2);
  EXPECT_FALSE(common_host({host_link(t, t.endpoint(2, 0))}));  // one RNIC's link: the link or the RNIC
  EXPECT_FALSE(common_host({host_link(t, t.endpoint(2, 0)), host_link(t, t.endpoint(3, 1))}));
  EXPECT_FALSE(common_host({host_link(t, t.endpoint(2, 0)), t.link_name(t.fabric_link(2, 0))}));
}

TEST(TopTied, TheSuspectsSharingTheBestScore) {
  EXPECT_EQ(top_tied({{"a", 0.5}, {"b", 0.5}, {"c", 0.2}}), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(top_tied({{"a", 0.6}, {"b", 0.5}}), (std::vector<std::string>{"a"}));
}

}  // namespace
}  // namespace gauntlet::harness
