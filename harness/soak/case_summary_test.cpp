#include "harness/soak/case_summary.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace gauntlet::harness::soak
