#include "harness/soak/scenario_generator.hpp"

#include <gtest/gtest.h>

#include <set>

#include "harness/detectors/registry.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scenario/loader.hpp"
#include "injectors/faults/fault_catalog.hpp"

namespace gauntlet::harness::soak {
namespace {

TEST(ScenarioGenerator, TheSameSeedAndCaseGiveTheSameText) {
  EXPECT_EQ(random_scenario_yaml(3, 17), random_scenario_yaml(3, 17));
  EXPECT_NE(random_scenario_yaml(3, 17), random_scenario_yaml(3, 18));
  EXPECT_NE(random_scenario_yaml(3, 17), random_scenario_yaml(4, 17));
}

// Every generated scenario is one the loader accepts, and over a few hundred
// cases every engine, every fault type the catalog simulates (packet-level
// ones on the engines that model packets), every detector and every policy
// shows up.
TEST(ScenarioGenerator, CasesAreValidAndCoverTheEnginesFaultTypesDetectorsAndPolicies) {
  const DetectorRegistry registry = builtin_detectors();
  std::set<std::string> fault_types, packet_level_types, engines, detectors, policies;
  std::set<int> host_counts;
  for (std::uint64_t k = 0; k < 300; ++k) {
    const std::string yaml = random_scenario_yaml(1, k);
    try {
      const Scenario s = parse_scenario(yaml, "case.yaml", registry);
      for (const injectors::FaultSpec& f : s.faults) {
        fault_types.insert(f.type);
        if (s.engine != "flow") packet_level_types.insert(f.type);
      }
      engines.insert(s.engine);
      for (const DetectorSpec& d : s.detectors) detectors.insert(d.name);
      policies.insert(s.mitigation);
      host_counts.insert(s.cluster.hosts);
    } catch (const InputError& e) {
      ADD_FAILURE() << "case " << k << ": " << e.what() << "\n" << yaml;
    }
  }
  const injectors::FaultCatalog catalog = injectors::builtin_fault_catalog();
  for (const injectors::FaultDescriptor& d : catalog.all())
    if (d.simulated) {
      EXPECT_TRUE(packet_level_types.contains(d.spec.name)) << d.spec.name;
    }
  EXPECT_EQ(fault_types.size(), catalog.all().size());
  EXPECT_EQ(engines, (std::set<std::string>{"flow", "packet", "hybrid"}));
  EXPECT_EQ(detectors.size(), 6u);
  EXPECT_EQ(policies, (std::set<std::string>{"none", "isolate-restart", "falcon-ladder"}));
  EXPECT_GE(host_counts.size(), 4u);
}

}  // namespace
}  // namespace gauntlet::harness::soak
