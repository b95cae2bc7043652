#pragma once
// trace.json: Chrome trace-event format (opens in Perfetto and
// chrome://tracing). Simulated time in microseconds. One process per
// simulated run: the run detectors share (under a mitigation policy, the
// status quo run with no detector), each run a detector watched alone (its
// policy acting on its alerts), and the fault-free run. A run's process
// has a track for iterations, one for faults (runs with faults), one per
// detector's alerts, one for the mitigation actions taken, and one per
// sampled rank's collectives when the run carries a collective sample
// (harness/runner/collective_sample.hpp).
//
// Size stays bounded for month-scale runs: a steady span of identical
// iterations is one slice (short spans are drawn iteration by iteration,
// up to kMaxIterationSlices a run),
// alerts beyond kMaxTraceAlerts per detector and actions beyond it per run
// are dropped with a count in the track's metadata, so are the healthy
// fleet's background conditions beyond kMaxTraceBackground a run (a month of
// a large fleet holds hundreds of thousands), and collectives are
// those of a bounded sample of ranks and iterations, described under
// otherData.runs[].collective_sample.
#include <map>
#include <string>
#include <vector>

#include "harness/report/run_view.hpp"

namespace gauntlet::harness {

inline constexpr std::uint64_t kPerIterationSlicesUpTo = 64;  // spans this short get a slice per iteration
// ... while a run's short spans hold at most this many iterations in all: a
// month checkpointing every few minutes is all short spans, hundreds of
// thousands of iterations, and then each span is one slice.
inline constexpr std::uint64_t kMaxIterationSlices = 20000;
inline constexpr std::size_t kMaxTraceAlerts = 20000;
inline constexpr std::size_t kMaxTraceBackground = 20000;

// One simulated run as the trace shows it.
struct TraceRun {
  std::string name;  // the process name
  std::vector<models::IterationSpan> timeline;
  bool with_faults = true;             // false for the fault-free run
  std::vector<std::string> detectors;  // whose alerts this run shows, in order
  std::map<std::string, std::vector<Alert>> alerts;
  std::vector<MitigationAction> actions;  // what the policy did in this run
  CollectiveSample collectives;
};

// The runs of a finished scenario: the shared (or status quo) run first,
// then each detector's own run in scenario order, then the fault-free run.
// With several tenants, each tenant's in turn (its job's iterations, its
// detectors), named "job NAME: ...", over every fault of the cluster.
std::vector<TraceRun> trace_runs(const RunReport& report);

std::string trace_json(const std::vector<TraceRun>& runs, const std::vector<FaultEpisode>& faults, double sim_seconds);
std::string trace_json(const RunReport& report);
// A single run (as read back from a folder): its faults, alerts and collectives.
std::string trace_json(const RunView& run);

}  // namespace gauntlet::harness
