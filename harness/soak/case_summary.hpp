#pragma once
// What the scenario fuzzer's cases reached: how many ran on each engine and
// how many failed, and how many faults of each catalog type each engine
// acted out. A type no case drew shows as 0, one the engine cannot act out
// as "-", so a budget that misses a code path says so.
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
  // A table, one line per engine, then one per fault type.
  std::string text() const;

 private:
  struct EngineCount {
    int cases = 0;
    int failed = 0;
  };
  const injectors::FaultCatalog& catalog_;
  std::map<std::string, EngineCount> engines_;                 // by engine
  std::map<std::pair<std::string, std::string>, int> faults_;  // by fault type and engine
  int refused_ = 0;                                            // scenarios the loader refused
};

}  // namespace gauntlet::harness::soak
