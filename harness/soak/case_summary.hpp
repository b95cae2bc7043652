#pragma once
// What the scenario fuzzer's cases reached: how many ran on each engine and
// how many failed, and how many faults of each catalog type each engine
// acted out. A type no case drew shows as 0, one the engine cannot act out
// as "-", so a budget that misses a code path says so. Then how many cases
// of each engine each invariant across runs was checked on, and which ones
// a case could not reach, and why.
#include <map>
#include <string>
#include <vector>

#include "harness/soak/case_runner.hpp"
#include "injectors/faults/fault_catalog.hpp"

namespace gauntlet::harness::soak {

class CaseSummary {
 public:
  explicit CaseSummary(const injectors::FaultCatalog& catalog) : catalog_(catalog) {}
  void add(const CaseReport& report);
  // A line of cases per engine, a table of faults by type and engine, a
  // table of invariants checked by engine and a line per skipped check.
  std::string text() const;
  // What the cases did not reach: an engine no case ran on, a simulated
  // catalog type no case drew, an invariant no case was checked on; one
  // phrase each, empty when the cases reached everything.
  std::vector<std::string> unreached() const;

 private:
  struct EngineCount {
    int cases = 0;
    int failed = 0;
  };
  const injectors::FaultCatalog& catalog_;
  std::map<std::string, EngineCount> engines_;                  // by engine
  std::map<std::pair<std::string, std::string>, int> faults_;   // by fault type and engine
  std::map<std::pair<std::string, std::string>, int> checked_;  // by invariant and engine
  // By invariant and why it was skipped, then engine.
  std::map<std::pair<std::string, std::string>, std::map<std::string, int>> skipped_;
  int refused_ = 0;  // scenarios the loader refused

  std::string engines_text() const;
  std::string faults_text() const;
  std::string checks_text() const;
};

}  // namespace gauntlet::harness::soak
