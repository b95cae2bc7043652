#include "harness/soak/case_summary.hpp"

#include <cstdio>

namespace gauntlet::harness::soak {
namespace {

const std::vector<std::string> kEngines = {"flow", "packet", "hybrid"};

}  // namespace

void CaseSummary::add(const CaseReport& report) {
  if (report.engine.empty()) {
    ++refused_;
    return;
  }
  EngineCount& count = engines_[report.engine];
  ++count.cases;
  if (!report.problems.empty()) ++count.failed;
  for (const std::string& type : report.fault_types) ++faults_[{type, report.engine}];
}

std::string CaseSummary::text() const {
  std::string out = "reached:";
  char cell[96];
  for (const std::string& engine : kEngines) {
    const auto it = engines_.find(engine);
    const EngineCount count = it == engines_.end() ? EngineCount{} : it->second;
    std::snprintf(cell, sizeof cell, " %s %d cases (%d failed);", engine.c_str(), count.cases, count.failed);
    out += cell;
  }
  out += " refused " + std::to_string(refused_) + "\n";
  std::snprintf(cell, sizeof cell, "  %-18s %7s %7s %7s\n", "faults by type", "flow", "packet", "hybrid");
  out += cell;
  for (const injectors::FaultDescriptor& d : catalog_.all()) {
    if (!d.simulated) continue;
    std::vector<std::string> cells;
    for (const std::string& engine : kEngines) {
      const auto it = faults_.find({d.spec.name, engine});
      const bool possible = engine != "flow" || !d.spec.needs_packets;
      cells.push_back(possible ? std::to_string(it == faults_.end() ? 0 : it->second) : "-");
    }
    std::snprintf(cell, sizeof cell, "  %-18s %7s %7s %7s\n", d.spec.name.c_str(), cells[0].c_str(), cells[1].c_str(),
                  cells[2].c_str());
    out += cell;
  }
  return out;
}

}  // namespace gauntlet::harness::soak
