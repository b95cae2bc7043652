#pragma once
// Failure traces of real fleets, read into one shape: each fault a server, a
// category, an onset and the time its repair took, if the trace records one.
// Two formats (docs/design.md#fault-traces):
//  - infinitehbd: the public InfiniteHBD trace, a JSON list of events
//    {node_id, event_time (days), event_type fault_start|fault_end,
//    fault_type {Level, Class, Desc}}; a fault_end closes the earliest open
//    fault_start of the same node and fault_type.
//  - csv: a header `server,start,end,category`, then one fault a line;
//    start and end are durations from the trace's origin ("3.9d", "90m"),
//    end empty when the fault was never repaired; '#' starts a comment line.
// A malformed line or event throws InputError at its file:line:col.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/scenario/scenario.hpp"
#include "sim/time.hpp"

namespace gauntlet::harness {

enum class TraceFormat { infinitehbd, csv };
std::optional<TraceFormat> trace_format_named(std::string_view name);

struct TraceFault {
  std::size_t server = 0;  // index into FaultTrace::servers
  // "Level/Class/Desc" for infinitehbd, the CSV's category as written.
  std::string category;
  sim::Nanos start = 0;              // from the trace's origin
  std::optional<sim::Nanos> repair;  // onset to repair; none: not repaired within the trace
  SourcePos pos;                     // the onset's place in the trace file
};

struct FaultTrace {
  std::string file;
  std::vector<std::string> servers;  // in order of their first fault
  std::vector<TraceFault> faults;    // by onset, ties in file order
  sim::Nanos span = 0;               // the last event's time
};

// Traces may be larger than scenario files; each event costs a few hundred
// bytes of parse tree, so this stays well inside the loader's memory bound.
inline constexpr std::size_t kMaxTraceFileBytes = 16u << 20;

FaultTrace parse_fault_trace(const std::string& text, const std::string& file_name, TraceFormat format);
FaultTrace load_fault_trace(const std::string& path, TraceFormat format);

}  // namespace gauntlet::harness
