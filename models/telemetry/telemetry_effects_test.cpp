#include "models/telemetry/telemetry_effects.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace gauntlet::models {
namespace {

using sim::kSecond;
constexpr sim::Nanos kNever = std::numeric_limits<sim::Nanos>::max();

TEST(TelemetryEffects, HostAndLinkEdgesAreAskedApart) {
  TelemetryEffects effects;
  effects.add_background_load(7, 30 * kSecond, 32 * kSecond, 0.15);
  effects.add_xid(2, 1, 10 * kSecond, 13);
  effects.add_gpu_throttle(5, 0, 20 * kSecond, 40 * kSecond, 0.2);
  effects.add_link_loss(3, 5 * kSecond, 50 * kSecond, 1e-6);

  EXPECT_EQ(effects.next_host_change(0), 10 * kSecond);
  EXPECT_EQ(effects.next_host_change(10 * kSecond), 20 * kSecond);
  EXPECT_EQ(effects.next_host_change(40 * kSecond), kNever);
  EXPECT_EQ(effects.next_link_change(0), 5 * kSecond);
  EXPECT_EQ(effects.next_link_change(5 * kSecond), 30 * kSecond);
  EXPECT_EQ(effects.next_link_change(32 * kSecond), 50 * kSecond);
  EXPECT_EQ(effects.next_change(0), 5 * kSecond);
  EXPECT_EQ(effects.next_change(5 * kSecond), 10 * kSecond);
  EXPECT_EQ(effects.next_change(50 * kSecond), kNever);
}

TEST(TelemetryEffects, HostsChangedAreThoseWithAnEdgeInTheHalfOpenSpan) {
  TelemetryEffects effects;
  effects.add_xid(4, 0, 10 * kSecond, 13);
  effects.add_xid(4, 3, 10 * kSecond, 31);
  effects.add_cpu_contention(1, 10 * kSecond, 12 * kSecond, 0.5);
  effects.add_agent_hang(9, 11 * kSecond, 20 * kSecond);
  effects.add_background_load(4, 10 * kSecond, 11 * kSecond, 0.1);  // a link, not host 4

  EXPECT_EQ(effects.hosts_changed(9 * kSecond, 10 * kSecond), (std::vector<int>{1, 4}));
  EXPECT_TRUE(effects.hosts_changed(10 * kSecond, 10 * kSecond + 1).empty());
  EXPECT_EQ(effects.hosts_changed(10 * kSecond, 11 * kSecond), (std::vector<int>{9}));
  EXPECT_EQ(effects.hosts_changed(11 * kSecond, 20 * kSecond), (std::vector<int>{1, 9}));
  EXPECT_TRUE(effects.hosts_changed(20 * kSecond, 100 * kSecond).empty());
}

TEST(TelemetryEffects, LinkChangeTimesAreTheLinksOwnEdgesInsideTheWindow) {
  TelemetryEffects effects;
  effects.add_background_load(2, 10 * kSecond, 12 * kSecond, 0.15);
  effects.add_background_load(2, 11 * kSecond, 30 * kSecond, 0.15);
  effects.add_link_loss(2, 0, 100 * kSecond, 1e-7);
  effects.add_background_load(3, 15 * kSecond, 16 * kSecond, 0.5);

  EXPECT_EQ(effects.link_change_times(2, 10 * kSecond, 40 * kSecond),
            (std::vector<sim::Nanos>{11 * kSecond, 12 * kSecond, 30 * kSecond}));
  EXPECT_TRUE(effects.link_change_times(3, 0, 15 * kSecond).empty());
  EXPECT_EQ(effects.link_change_times(3, 0, 20 * kSecond), (std::vector<sim::Nanos>{15 * kSecond, 16 * kSecond}));
  // Overlapping loads compose on their own link only.
  EXPECT_NEAR(effects.background_load(2, 11 * kSecond), 1 - 0.85 * 0.85, 1e-12);
  EXPECT_DOUBLE_EQ(effects.background_load(3, 11 * kSecond), 0.0);
  EXPECT_EQ(effects.loaded_links(), (std::vector<sim::LinkId>{2, 3}));
  EXPECT_EQ(effects.lossy_links(), (std::vector<sim::LinkId>{2}));
}

}  // namespace
}  // namespace gauntlet::models
