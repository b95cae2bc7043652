#include "harness/sweep/local_runner.hpp"

#include "harness/report/trace.hpp"
#include "harness/runner/outputs.hpp"
#include "harness/sweep/worker_pool.hpp"

namespace gauntlet::harness {
namespace {

std::string describe(const SweepSpec& spec, const SweepCell& cell) {
  std::string text = spec.scenarios[cell.scenario].name;
  for (const auto& [path, value] : cell_params(spec, cell)) text += " " + path + "=" + value;
  return text + " seed " + std::to_string(cell.seed);
}

}  // namespace

int run_one_cell(const SweepSpec& spec, const SweepCell& cell, const DetectorRegistry& registry, int parallel_runs) {
  const std::string what = describe(spec, cell);
  RunReport report;
  // Bad input is the loader's, or a simulation's that read a parameter only it uses.
  const int ran = worker_step(what, "run failed", [&] {
    RunOptions options;
    options.parallel_runs = parallel_runs;
    // Cells re-place their jobs onto the same hosts after the same failures:
    // one simulates each new placement's flow sets, the others read them.
    options.flow_sets = (spec.out / kFlowSetsFolder).string();
    report = run_scenario(cell_scenario(spec, cell, registry), registry, options);
  });
  if (ran != kWorkerOk) return ran;
  // report.html per cell is left out (gnuplot for thousands of cells);
  // `gauntlet report CELL_FOLDER` draws it on demand.
  return worker_step(what, "cannot write results", [&] {
    write_run_outputs(report, ClaimedFolder::claim(cell_folder(spec, cell)),
                      {{"trace.json", trace_json(report)}, {"cell.json", cell_json(cell_info(spec, cell))}});
  });
}

SweepRunResult run_cells(const SweepSpec& spec, const std::vector<SweepCell>& cells, const DetectorRegistry& registry,
                         const SweepRunOptions& options) {
  ProgressDisplay progress({options.progress_bar, options.quiet}, cells.size(), "cells");
  // With several workers each runs its two simulations one after the other,
  // so --jobs N keeps about N cores busy.
  const int parallel_runs = options.jobs > 1 ? 1 : 2;
  const WorkerPoolResult pool = run_in_workers(
      cells.size(), options.jobs, [&](std::size_t i) { return run_one_cell(spec, cells[i], registry, parallel_runs); },
      [&](std::size_t i, bool ok, std::size_t running, const WorkerPoolResult& so_far) {
        progress.update(describe(spec, cells[i]), ok, running, so_far);
      });
  return {pool.done, pool.failed, pool.bad_input};
}

}  // namespace gauntlet::harness
