#include "sim/component_id.hpp"

#include <gtest/gtest.h>

namespace gauntlet::sim {
namespace {

TEST(ComponentId, EveryKindRoundTrips) {
  for (const char* text : {"h12", "h12.gpu7", "h12.nic0", "h12.nic3.ft", "h5.cpu", "h5.agent", "leaf3", "spine1",
                           "h12.nic3~leaf3", "leaf3~spine1", "h0"}) {
    auto id = ComponentId::parse(text);
    ASSERT_TRUE(id) << text;
    EXPECT_EQ(id->str(), text);
  }
  EXPECT_EQ(ComponentId::parse("h12.nic3~leaf3")->kind, ComponentKind::host_link);
  EXPECT_EQ(ComponentId::parse("leaf3~spine1")->spine, 1);
}

TEST(ComponentId, RejectsWhatTheGrammarDoesNot) {
  for (const char* text : {"", "h", "h-1", "h01", "host3", "h3.gpu", "h3.gpu1x", "h3.nic2.fx", "leaf", "leaf3~",
                           "leaf3~leaf4", "spine1~leaf3", "h3.nic1~spine0", "H3", "h3.", "h3.cpu0"})
    EXPECT_FALSE(ComponentId::parse(text)) << text;
}

}  // namespace
}  // namespace gauntlet::sim
