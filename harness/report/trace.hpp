#pragma once
// trace.json: Chrome trace-event format (opens in Perfetto and
// chrome://tracing). Simulated time in microseconds. One process "job" with
// a track for iterations, one for faults and one per detector's alerts; a
// process "collectives" with one track per sampled rank when the run carries
// a collective sample (harness/runner/collective_sample.hpp).
//
// Size stays bounded for month-scale runs: a steady span of identical
// iterations is one slice (short spans are drawn iteration by iteration),
// alerts beyond kMaxTraceAlerts per detector are dropped with a count in
// the metadata, and collectives are those of a bounded sample of ranks and
// iterations, described under otherData.collective_sample.
#include <string>

#include "harness/report/run_view.hpp"

namespace gauntlet::harness {

inline constexpr std::uint64_t kPerIterationSlicesUpTo = 64;  // spans this short get a slice per iteration
inline constexpr std::size_t kMaxTraceAlerts = 20000;

std::string trace_json(const RunView& run);

}  // namespace gauntlet::harness
