#pragma once
// The capacity question over a sweep's results: which checkpoint interval,
// spares, spare layout, detector and mitigation lose the fewest GPU-hours
// to a failure source, with 95% intervals over seeds, against the
// Young/Daly optimum checkpoint interval sqrt(2 C MTBF).
//
// A setting's cost is the GPU-hours its runs lose against the fault-free
// run of the same setting (summary.json's lost_gpu_hours) plus what its
// checkpoints cost the fault-free run itself (pauses of checkpoint_cost every
// checkpoint_interval on every GPU of the job), so that checkpointing more
// often is not free. Idle spares are listed apart: they are capacity held,
// not training lost.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/detectors/registry.hpp"
#include "harness/report/aggregate.hpp"
#include "harness/sweep/sweep_spec.hpp"

namespace gauntlet::harness {

struct CapacityRow {
  std::string scenario;
  ParamList params;
  std::string detector;
  double checkpoint_interval_s = 0;
  double checkpoint_cost_s = 0;
  Estimate lost_gpu_hours;          // to failures
  double checkpoint_gpu_hours = 0;  // paid by the fault-free run too
  Estimate total_gpu_hours;         // the two together: the ranking
  double spare_gpu_hours = 0;       // spare hosts' GPUs held idle over the run
  double job_failures = 0;          // mean faults per run that hit the job
  double mtbf_s = 0;                // the run's length over job_failures; 0 without failures
  double young_daly_s = 0;          // sqrt(2 C MTBF); 0 without failures
};

struct CapacityAnalysis {
  std::vector<CapacityRow> rows;  // ranked by total_gpu_hours, lowest first
  // Young/Daly for the best row, the simulated optimum interval among rows
  // that differ from it only in the interval, and why they differ.
  double young_daly_s = 0;
  double best_interval_s = 0;
  std::string comparison;
};

// Reads every cell's summary.json (under spec.out); rows of cells with no
// results are left out. Throws InputError on malformed results.
CapacityAnalysis analyze_capacity(const SweepSpec& spec, const Aggregate& aggregate, const DetectorRegistry& registry);

std::string capacity_table(const CapacityAnalysis& analysis);
nlohmann::ordered_json capacity_json(const CapacityAnalysis& analysis);
// A report.html section: total lost GPU-hours against the checkpoint
// interval, one curve per other setting, Young/Daly marked.
std::string capacity_html(const CapacityAnalysis& analysis);

}  // namespace gauntlet::harness
