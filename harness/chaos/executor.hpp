#pragma once
// Runs a chaos plan on this host: safety checks, then the faults on the wall
// clock, with the journal, the watchdog, ground truth and an audit log.
#include <ostream>
#include <string>

#include "harness/chaos/plan.hpp"
#include "injectors/real/process.hpp"

namespace gauntlet::harness {

struct ChaosOptions {
  bool apply = false;            // false: print every command, change nothing
  std::string out_dir;           // "" = results/chaos/<name>
  std::string journal_path;      // "" = <out_dir>/journal.jsonl
  injectors::real::Argv prefix;  // run network commands inside e.g. `ip netns exec NS`
};

// Returns the exit code: 0 done and reverted, 1 failed or aborted (everything
// reverted), 2 refused (nothing changed).
int execute_chaos_plan(const ChaosPlan& plan, const ChaosOptions& options, std::ostream& out, std::ostream& err);

}  // namespace gauntlet::harness
