#include "harness/soak/case_summary.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "harness/detectors/registry.hpp"
#include "harness/scenario/loader.hpp"
#include "harness/soak/scenario_generator.hpp"

namespace gauntlet::harness::soak {
namespace {

CaseReport report(const std::string& engine, std::vector<std::string> faults, bool failed = false) {
  CaseReport r;
  r.engine = engine;
  r.fault_types = std::move(faults);
  if (failed) r.problems.push_back("broken");
  return r;
}

TEST(CaseSummary, CountsCasesByEngineAndFaultsByTypeAndEngine) {
  const injectors::FaultCatalog catalog = injectors::builtin_fault_catalog();
  CaseSummary summary(catalog);
  summary.add(report("flow", {"link_loss", "gpu_fail"}));
  summary.add(report("packet", {"pfc_storm", "link_loss"}, true));
  summary.add(report("hybrid", {"pfc_storm"}));
  summary.add(report("", {}));  // refused by the loader
  const std::string text = summary.text();
  EXPECT_NE(text.find("flow 1 cases (0 failed); packet 1 cases (1 failed); hybrid 1 cases (0 failed); refused 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  link_loss                1       1       0\n"), std::string::npos) << text;
  // The flow engine cannot act out a PFC storm: shown apart from a type no case drew.
  EXPECT_NE(text.find("  pfc_storm                -       1       1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  node_crash               0       0       0\n"), std::string::npos) << text;
}

TEST(CaseSummary, NamesWhatTheCasesDidNotReach) {
  const injectors::FaultCatalog catalog = injectors::builtin_fault_catalog();
  CaseSummary summary(catalog);
  CaseReport flow = report("flow", {"link_loss"});
  flow.checked = {kSameBytes, kByteBalance};
  CaseReport packet = report("packet", {"pfc_storm"});
  packet.checked = {kSameBytes};
  packet.skipped = {{kByteBalance, "shorter than a scrape"}};
  summary.add(flow);
  summary.add(packet);
  const std::vector<std::string> missing = summary.unreached();
  EXPECT_NE(std::find(missing.begin(), missing.end(), "no case on the hybrid engine"), missing.end());
  EXPECT_NE(std::find(missing.begin(), missing.end(), "no gpu_fail fault"), missing.end());
  EXPECT_NE(std::find(missing.begin(), missing.end(), std::string("no case checked ") + kFastForward), missing.end());
  EXPECT_EQ(std::find(missing.begin(), missing.end(), "no pfc_storm fault"), missing.end());
  EXPECT_EQ(std::find(missing.begin(), missing.end(), std::string("no case checked ") + kByteBalance), missing.end());
  const std::string text = summary.text();
  EXPECT_NE(text.find("skipped bytes balance per link (shorter than a scrape): flow 0 packet 1 hybrid 0"),
            std::string::npos)
      << text;
}

// The cases the test suite runs (scenario_fuzz_budget: seed 1, cases 0 to
// 99) draw every engine and every fault type the catalog simulates,
// pfc_storm among them, as the scenarios the loader reads from them show.
// (The budget itself runs with --expect-coverage, which checks the same of
// the runs and adds the invariants checked.)
TEST(CaseSummary, TheTestSuitesBatchDrawsEveryEngineAndCatalogType) {
  const injectors::FaultCatalog catalog = injectors::builtin_fault_catalog();
  const DetectorRegistry registry = builtin_detectors();
  CaseSummary summary(catalog);
  for (std::uint64_t k = 0; k < 100; ++k) {
    const Scenario s = parse_scenario(random_scenario_yaml(1, k), "case.yaml", registry);
    CaseReport r = report(s.engine, {});
    for (const injectors::FaultSpec& f : s.faults) r.fault_types.push_back(f.type);
    r.checked = kCheckNames;
    summary.add(r);
  }
  EXPECT_TRUE(summary.unreached().empty()) << summary.unreached().front();
  const std::string text = summary.text();
  EXPECT_EQ(text.find(" 0 cases"), std::string::npos) << text;
}

}  // namespace
}  // namespace gauntlet::harness::soak
