#include "harness/detectors/name_table.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "sim/rng.hpp"

namespace gauntlet::harness {
namespace {

// Ids are dense in order of first sight, stable under repeats, and agree
// with an ordered map kept beside the table through growth.
TEST(NameTable, IdsAreFirstSightOrderThroughGrowth) {
  NameTable table;
  std::map<std::string, NameTable::Id> expected;
  sim::Rng rng = sim::RngStreams(7).stream("names");
  for (int i = 0; i < 200000; ++i) {
    // Component-like names, many repeated, some differing in one character.
    const std::string name = "h" + std::to_string(rng.below(30000)) + ".nic" + std::to_string(rng.below(8));
    const auto [it, fresh] = expected.try_emplace(name, static_cast<NameTable::Id>(expected.size()));
    ASSERT_EQ(table.intern(name), it->second) << name << (fresh ? " (new)" : " (seen)");
  }
  ASSERT_EQ(table.size(), expected.size());
  for (const auto& [name, id] : expected) {
    EXPECT_EQ(table.name(id), name);
    EXPECT_EQ(table.find(name), id);
  }
}

TEST(NameTable, UnknownNamesAreNotFound) {
  NameTable table;
  EXPECT_EQ(table.find("leaf3~spine1"), std::nullopt);
  EXPECT_EQ(table.intern(""), 0u);
  EXPECT_EQ(table.intern("leaf3~spine1"), 1u);
  EXPECT_EQ(table.find("leaf3~spine10"), std::nullopt);
  EXPECT_EQ(table.find("leaf3~spine"), std::nullopt);
  EXPECT_EQ(table.find(""), 0u);
  EXPECT_EQ(table.size(), 2u);
}

}  // namespace
}  // namespace gauntlet::harness
