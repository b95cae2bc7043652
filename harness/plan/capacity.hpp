#pragma once
// The capacity question over a sweep's results: which checkpoint interval,
// spares, spare layout, detector and mitigation lose the fewest GPU-hours
// to a failure source, with 95% intervals over seeds, against the
// Young/Daly optimum checkpoint interval sqrt(2 C MTBF).
//
// A setting's cost is a weighted sum of GPU-hours: those its runs lose
// against the fault-free run of the same setting (summary.json's
// lost_gpu_hours), those its checkpoints cost the fault-free run itself
// (pauses of checkpoint_cost every checkpoint_interval on every GPU of the
// job), so that checkpointing more often is not free, and those its spare
// hosts' GPUs are held idle, so that spares are not free either. Each
// weight is 1 unless the command line says otherwise (a spare running
// preemptible work costs less than one held idle).
//
// Every cell of one seed draws the same faults, so settings are also
// compared seed by seed (paired.hpp): the mean per-seed difference of their
// costs with its interval, and the seeds that would separate them.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/detectors/registry.hpp"
#include "harness/plan/paired.hpp"
#include "harness/report/aggregate.hpp"
#include "harness/sweep/sweep_spec.hpp"

namespace gauntlet::harness {

// What one GPU-hour of each kind counts for in the ranking.
struct CostWeights {
  double lost = 1;         // training lost to failures
  double checkpoints = 1;  // training paused to write checkpoints
  double spares = 1;       // spare GPUs held idle
};

struct CapacityRow {
  std::string scenario;
  ParamList params;
  std::string detector;
  double checkpoint_interval_s = 0;
  double checkpoint_cost_s = 0;
  Estimate lost_gpu_hours;          // to failures
  double checkpoint_gpu_hours = 0;  // paid by the fault-free run too
  double spare_gpu_hours = 0;       // spare hosts' GPUs held idle over the run
  Estimate total_gpu_hours;         // the weighted sum of the three: the ranking
  std::map<std::uint64_t, double> total_by_seed;
  // The same cost in equal time blocks of each seed's run (blocks.hpp),
  // for seeds whose trace.json gives them; they add up to total_by_seed.
  std::map<std::uint64_t, std::vector<double>> cost_by_block;
  double job_failures = 0;  // mean faults per run that hit the job
  double mtbf_s = 0;        // the run's length over job_failures; 0 without failures
  double young_daly_s = 0;  // sqrt(2 C MTBF); 0 without failures
};

// Row `b` against row `a` (a ranks ahead), paired by seed.
struct CapacityPair {
  std::size_t a = 0, b = 0;
  PairedComparison comparison;
};

struct CapacityAnalysis {
  CostWeights weights;
  std::vector<CapacityRow> rows;    // ranked by total_gpu_hours, lowest first
  std::vector<CapacityPair> pairs;  // every two rows with seeds in common
  // Young/Daly for the best row, the simulated optimum interval among rows
  // that differ from it only in the interval, and why they differ.
  double young_daly_s = 0;
  double best_interval_s = 0;
  std::string comparison;
  // Cells the plan lists that have no results yet: the analysis is interim.
  std::vector<std::string> missing_cells;
  int planned_cells = 0;
};

// Reads every cell's summary.json (under spec.out); rows of cells with no
// results are left out. Throws InputError on malformed results.
CapacityAnalysis analyze_capacity(const SweepSpec& spec, const Aggregate& aggregate, const DetectorRegistry& registry,
                                  const CostWeights& weights = {});

std::string capacity_table(const CapacityAnalysis& analysis);
nlohmann::ordered_json capacity_json(const CapacityAnalysis& analysis);
// A report.html section: total lost GPU-hours against the checkpoint
// interval, one curve per other setting, Young/Daly marked.
std::string capacity_html(const CapacityAnalysis& analysis);

}  // namespace gauntlet::harness
