#pragma once
// A run cut into equal time blocks, so that two settings can be compared
// block by block within one run as well as seed by seed (paired.hpp's
// compare_blocks).
//
// A cell's trace.json (report/trace.hpp) holds every simulated run's
// iterations: the run each detector was scored on (under a mitigation
// policy, a run of its own) and the fault-free run. timeline.csv holds only
// the shared run, which under a policy no detector acts on. The iterations
// each run completes in a block, fault-free minus scored, are the block's
// lost iterations; over the blocks they add up to the run's lost_iterations,
// which the reader checks against summary.json.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace gauntlet::harness {

// A stretch of `count` iterations of equal duration, back to back.
struct IterationStretch {
  double start_s = 0;
  double duration_s = 0;
  std::uint64_t count = 0;
};

// Iterations whose end falls in each of `blocks` equal parts of [0, run_s]
// (an end past run_s counts in the last): every iteration in exactly one.
std::vector<double> completed_by_block(const std::vector<IterationStretch>& stretches, double run_s, int blocks);

// The iteration stretches of a trace.json's runs: the fault-free run, and
// the run each detector was scored on. Multi-job traces (runs named "job
// NAME: ...") give none, and so does a file that is not JSON. Throws
// InputError on one that cannot be read (sim/input_file.hpp).
struct TraceTimelines {
  std::vector<IterationStretch> fault_free;
  std::map<std::string, std::vector<IterationStretch>> scored;  // by detector
};
TraceTimelines read_trace_timelines(const std::filesystem::path& trace);

// Each detector's lost GPU-hours in each of `blocks` equal parts of the run
// (lost iterations x the fault-free run's mean iteration x `gpus`, as
// summary.json prices them). A detector is left out when the trace lacks
// its runs or its blocks do not add up to `lost_iterations` (by detector,
// from summary.json).
std::map<std::string, std::vector<double>> lost_gpu_hours_by_block(
    const TraceTimelines& timelines, double run_s, double gpus, int blocks,
    const std::map<std::string, double>& lost_iterations);

}  // namespace gauntlet::harness
