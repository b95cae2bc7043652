#include "harness/soak/case_summary.hpp"

#include <cstdio>
#include <set>

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
  for (const std::string& check : report.checked) ++checked_[{check, report.engine}];
  for (const auto& [check, why] : report.skipped) ++skipped_[{check, why}][report.engine];
}

std::string CaseSummary::text() const { return engines_text() + faults_text() + checks_text(); }

std::string CaseSummary::engines_text() const {
  std::string out = "reached:";
  char cell[96];
  for (const std::string& engine : kEngines) {
    const auto it = engines_.find(engine);
    const EngineCount count = it == engines_.end() ? EngineCount{} : it->second;
    std::snprintf(cell, sizeof cell, " %s %d cases (%d failed);", engine.c_str(), count.cases, count.failed);
    out += cell;
  }
  return out + " refused " + std::to_string(refused_) + "\n";
}

std::string CaseSummary::faults_text() const {
  char cell[96];
  std::snprintf(cell, sizeof cell, "  %-18s %7s %7s %7s\n", "faults by type", "flow", "packet", "hybrid");
  std::string out = cell;
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

std::vector<std::string> CaseSummary::unreached() const {
  std::vector<std::string> missing;
  for (const std::string& engine : kEngines)
    if (!engines_.contains(engine)) missing.push_back("no case on the " + engine + " engine");
  std::set<std::string> drawn, checked;
  for (const auto& [type_and_engine, count] : faults_) drawn.insert(type_and_engine.first);
  for (const auto& [check_and_engine, count] : checked_) checked.insert(check_and_engine.first);
  for (const injectors::FaultDescriptor& d : catalog_.all())
    if (d.simulated && !drawn.contains(d.spec.name)) missing.push_back("no " + d.spec.name + " fault");
  for (const std::string& check : kCheckNames)
    if (!checked.contains(check)) missing.push_back("no case checked " + check);
  return missing;
}

std::string CaseSummary::checks_text() const {
  const auto count = [](const auto& counts, const auto& key) {
    const auto it = counts.find(key);
    return it == counts.end() ? 0 : it->second;
  };
  char cell[128];
  std::snprintf(cell, sizeof cell, "  %-28s %7s %7s %7s\n", "invariants checked (cases)", "flow", "packet", "hybrid");
  std::string out = cell;
  for (const std::string& check : kCheckNames) {
    std::snprintf(cell, sizeof cell, "  %-28s %7d %7d %7d\n", check.c_str(),
                  count(checked_, std::pair{check, kEngines[0]}), count(checked_, std::pair{check, kEngines[1]}),
                  count(checked_, std::pair{check, kEngines[2]}));
    out += cell;
  }
  for (const auto& [check_and_why, by_engine] : skipped_) {
    out += "  skipped " + check_and_why.first + " (" + check_and_why.second + "):";
    for (const std::string& engine : kEngines) out += " " + engine + " " + std::to_string(count(by_engine, engine));
    out += "\n";
  }
  return out;
}

}  // namespace gauntlet::harness::soak
