#pragma once
// A chaos plan (docs/chaos.md): which real interfaces and GPUs stand for which
// component ids, what may be touched, and the faults to inject on this host.
#include <map>
#include <string>
#include <vector>

#include "injectors/faults/fault_catalog.hpp"
#include "injectors/real/drivers.hpp"
#include "sim/time.hpp"

namespace gauntlet::harness {

struct ChaosFault {
  injectors::real::RealFault real;  // spec with start = `at`, and the real names it maps to
  int line = 0;                     // where the fault sits in the plan, for messages
  int column = 0;
};

struct ChaosSafety {
  std::vector<std::string> allow;  // component ids that may be touched
  int max_concurrent = 1;
  sim::Nanos max_duration = 0;          // bounds every fault and the whole plan
  injectors::real::Argv abort_command;  // non-zero exit: abort and revert
  sim::Nanos abort_interval = 5 * sim::kSecond;
  std::vector<std::string> allow_default_route;  // interfaces allowed although they carry the default route
};

struct ChaosPlan {
  std::string name;
  std::string host;                               // component id of this host
  std::map<std::string, std::string> interfaces;  // real interface -> component id
  std::map<int, std::string> gpus;                // GPU index -> component id
  ChaosSafety safety;
  std::vector<ChaosFault> faults;  // sorted by start
  std::string source_path;

  sim::Nanos end() const;  // when the last fault ends
};

// Loads and validates a plan; every problem is an InputError "file:line:col:
// message". Validation covers what can be known without the host: unknown
// keys, units, mapping, allow-list, durations, concurrency and overlaps.
ChaosPlan load_chaos_plan(const std::string& path);
// Faults are read through `types` (the built-in types when not given).
ChaosPlan parse_chaos_plan(const std::string& text, const std::string& file_name);
ChaosPlan parse_chaos_plan(const std::string& text, const std::string& file_name, const injectors::FaultCatalog& types);

}  // namespace gauntlet::harness
