#pragma once
// Runs sweep cells on local worker processes: one forked process per cell,
// at most `jobs` at once, each writing its own results folder (the runner's
// files, trace.json and cell.json). Progress goes to stderr: a bar on a
// terminal, one line per finished cell otherwise (cluster logs).
#include <cstddef>
#include <vector>

#include "harness/detectors/registry.hpp"
#include "harness/sweep/sweep_spec.hpp"

namespace gauntlet::harness {

// Under the sweep's out: the flow set outcomes its cells share
// (models/collectives/flow_set_archive.hpp).
inline constexpr const char* kFlowSetsFolder = ".flow-sets";

struct SweepRunOptions {
  std::size_t jobs = 1;
  bool progress_bar = false;  // else line per cell
  bool quiet = false;         // no progress at all
};

struct SweepRunResult {
  std::size_t done = 0;
  std::size_t failed = 0;     // cells that did not finish, bad input included
  std::size_t bad_input = 0;  // of those, cells whose worker found bad input (exit code 2)
};

SweepRunResult run_cells(const SweepSpec& spec, const std::vector<SweepCell>& cells, const DetectorRegistry& registry,
                         const SweepRunOptions& options);

// Runs one cell in the calling process and writes its folder; returns the
// exit code its worker process ends with (0 ok, 1 run failed, 2 bad input).
int run_one_cell(const SweepSpec& spec, const SweepCell& cell, const DetectorRegistry& registry, int parallel_runs);

}  // namespace gauntlet::harness
