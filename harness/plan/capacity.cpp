#include "harness/plan/capacity.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "harness/plan/blocks.hpp"
#include "harness/report/gnuplot.hpp"
#include "harness/report/html.hpp"
#include "harness/report/json_file.hpp"
#include "harness/scenario/input_error.hpp"

namespace gauntlet::harness {
namespace {

namespace fs = std::filesystem;

constexpr const char* kIntervalPath = "job.checkpoint_interval";
// Each run is read in this many equal blocks, merged for each pair into as
// many as give kFailuresPerBlock failures a block (a power of two).
constexpr int kFineBlocks = 64;
// Blocks several mean times between failures long, so that what a failure
// costs (detection, restart, the rollback, a spare awaiting repair) falls
// mostly in its own block. A choice, not a measurement; the lag-1 check of
// compare_blocks merges blocks further where it is not enough.
constexpr double kFailuresPerBlock = 3;

std::string params_text(const ParamList& params, const std::string& without = "") {
  std::string out;
  for (const auto& [path, value] : params)
    if (path != without) out += (out.empty() ? "" : ",") + path + "=" + value;
  return out.empty() ? "base" : out;
}

std::string hours(double seconds) {
  char text[32];
  if (seconds >= 3600)
    std::snprintf(text, sizeof text, "%.2g h", seconds / 3600);
  else
    std::snprintf(text, sizeof text, "%.3g min", seconds / 60);
  return text;
}

// What one run's summary.json says: the faults that hit the job and the
// GPU-hours each detector's run lost.
struct RunResult {
  double failures = 0;
  std::map<std::string, double> lost_gpu_hours;  // by detector
  std::map<std::string, double> lost_iterations;
  std::map<std::string, std::vector<double>> lost_by_block;  // kFineBlocks of them, from trace.json
};

RunResult read_run(const fs::path& summary, double run_s, double gpus) {
  const auto json = read_json_file(summary);
  const auto faults = json.is_object() ? json.find("faults") : json.end();
  if (faults == json.end() || !faults->is_array())
    throw InputError(summary.string(), 1, 1, "not a gauntlet summary: needs a faults list");
  RunResult run;
  for (const auto& fault : *faults) {
    const auto affected = fault.is_object() ? fault.find("affected_job") : fault.end();
    const auto kind = fault.is_object() ? fault.find("class") : fault.end();
    if (!fault.is_object() || (affected != fault.end() && !affected->is_boolean()) ||
        (kind != fault.end() && !kind->is_string()))
      throw InputError(summary.string(), 1, 1,
                       "not a gauntlet summary: each fault is an object with a boolean affected_job and a class");
    if (affected != fault.end() && affected->get<bool>() &&
        (kind == fault.end() || kind->get<std::string>() != "benign"))
      ++run.failures;
  }
  const auto detectors = json.find("detectors");
  if (detectors != json.end() && detectors->is_object())
    for (const auto& [name, d] : detectors->items()) {
      const auto lost = d.is_object() ? d.find("lost_gpu_hours") : d.end();
      if (lost != d.end() && lost->is_number()) run.lost_gpu_hours[name] = lost->get<double>();
      const auto iterations = d.is_object() ? d.find("lost_iterations") : d.end();
      if (iterations != d.end() && iterations->is_number()) run.lost_iterations[name] = iterations->get<double>();
    }
  // Blocks are an addition: a cell whose trace.json is missing or cannot be
  // read (past the JSON size limit, say) is compared by seed alone.
  const fs::path trace = summary.parent_path() / "trace.json";
  try {
    if (fs::exists(trace))
      run.lost_by_block =
          lost_gpu_hours_by_block(read_trace_timelines(trace), run_s, gpus, kFineBlocks, run.lost_iterations);
  } catch (const InputError&) {
    run.lost_by_block.clear();
  }
  return run;
}

// Rows that differ from `best` only in the checkpoint interval, by interval.
std::vector<const CapacityRow*> interval_siblings(const std::vector<CapacityRow>& rows, const CapacityRow& best) {
  std::vector<const CapacityRow*> siblings;
  for (const CapacityRow& row : rows)
    if (row.scenario == best.scenario && row.detector == best.detector &&
        params_text(row.params, kIntervalPath) == params_text(best.params, kIntervalPath) && row.total_gpu_hours.n > 0)
      siblings.push_back(&row);
  std::sort(siblings.begin(), siblings.end(), [](const CapacityRow* a, const CapacityRow* b) {
    return a->checkpoint_interval_s < b->checkpoint_interval_s;
  });
  return siblings;
}

double half_width(const Estimate& e) { return std::isnan(e.half_width) ? 0 : e.half_width; }

std::string compare(const CapacityAnalysis& analysis, const CapacityRow& best) {
  if (best.young_daly_s <= 0)
    return "No failure hit the job, so Young/Daly has no optimum: checkpoint as rarely as the grid allows.";
  const auto siblings = interval_siblings(analysis.rows, best);
  const std::string yd = "Young/Daly's optimum sqrt(2 x " + hours(best.checkpoint_cost_s) + " x MTBF " +
                         hours(best.mtbf_s) + ") is " + hours(best.young_daly_s);
  if (siblings.size() < 2)
    return yd + "; the grid holds one checkpoint interval (" + hours(best.checkpoint_interval_s) +
           "): sweep job.checkpoint_interval to compare.";
  const CapacityRow* nearest = siblings.front();
  for (const CapacityRow* row : siblings)
    if (std::abs(std::log(row->checkpoint_interval_s / best.young_daly_s)) <
        std::abs(std::log(nearest->checkpoint_interval_s / best.young_daly_s)))
      nearest = row;
  int overlapping = 0;
  const double best_hi = best.total_gpu_hours.mean + half_width(best.total_gpu_hours);
  for (const CapacityRow* row : siblings)
    if (row->total_gpu_hours.mean - half_width(row->total_gpu_hours) <= best_hi) ++overlapping;
  std::string flat = overlapping > 1
                         ? " " + std::to_string(overlapping) + " of the " + std::to_string(siblings.size()) +
                               " intervals overlap the best within their 95% intervals over " +
                               std::to_string(best.total_gpu_hours.n) +
                               " seeds: the curve is flat near its minimum and these seeds do not separate them."
                         : "";
  int separated = 0, others = 0;
  for (const CapacityPair& pair : analysis.pairs) {
    if (pair.a != 0 || std::find(siblings.begin(), siblings.end(), &analysis.rows[pair.b]) == siblings.end()) continue;
    ++others;
    separated += pair.comparison.separated && pair.comparison.difference.mean > 0 ? 1 : 0;
  }
  if (others > 0)
    flat +=
        " Paired by seed (a seed draws the same faults in every cell) and by time block within seeds, the best "
        "costs less than " +
        std::to_string(separated) + " of the other " + std::to_string(others) +
        " intervals with a 95% interval of the difference that excludes 0.";
  if (nearest->checkpoint_interval_s == best.checkpoint_interval_s)
    return yd + "; the nearest swept interval, " + hours(best.checkpoint_interval_s) +
           ", is also the simulated best: they agree to the grid's resolution." + flat;
  std::string why = yd + "; the simulated best is " + hours(best.checkpoint_interval_s) + ".";
  const double lo = siblings.front()->checkpoint_interval_s, hi = siblings.back()->checkpoint_interval_s;
  if (best.young_daly_s < lo || best.young_daly_s > hi)
    why += " Young/Daly's optimum lies outside the swept intervals.";
  why += flat;
  char failures[64];
  std::snprintf(failures, sizeof failures, "%.1f", best.job_failures);
  why +=
      std::string(" Young/Daly takes failures as a Poisson stream costing half an interval of rollback each; here ") +
      failures +
      " failures a run are few, and where each lands between checkpoints (and whether it lands "
      "while the job is already down) decides the rollback, while detection and restart add the same cost at "
      "every interval.";
  return why;
}

}  // namespace

namespace {

// `row`'s cost in each seed's run, and in each block of it.
void add_seed_costs(const std::map<std::uint64_t, RunResult>& runs, const CostWeights& weights, CapacityRow& row) {
  std::vector<double> totals;
  const double fixed = weights.checkpoints * row.checkpoint_gpu_hours + weights.spares * row.spare_gpu_hours;
  for (const auto& [seed, run] : runs) {
    const auto lost = run.lost_gpu_hours.find(row.detector);
    if (lost == run.lost_gpu_hours.end()) continue;
    row.total_by_seed[seed] = weights.lost * lost->second + fixed;
    totals.push_back(row.total_by_seed[seed]);
    // The same sum block by block: checkpoints and spares cost alike in every block.
    const auto blocks = run.lost_by_block.find(row.detector);
    if (blocks == run.lost_by_block.end()) continue;
    std::vector<double>& cost = row.cost_by_block[seed];
    for (double lost_in_block : blocks->second)
      cost.push_back(weights.lost * lost_in_block + fixed / static_cast<double>(blocks->second.size()));
  }
  row.total_gpu_hours = estimate_mean(totals);
}

// Blocks a seed for two rows: the largest power of two that leaves
// kFailuresPerBlock failures a block to the row with fewer.
int blocks_per_seed(const CapacityRow& a, const CapacityRow& b) {
  const double failures = std::min(a.job_failures, b.job_failures);
  int k = 1;
  while (k * 2 <= kFineBlocks && failures / (k * 2) >= kFailuresPerBlock) k *= 2;
  return k;
}

// Every two rows with seeds in common, `a` ranked ahead of `b`.
std::vector<CapacityPair> all_pairs(const std::vector<CapacityRow>& rows) {
  std::vector<CapacityPair> pairs;
  for (std::size_t a = 0; a < rows.size(); ++a)
    for (std::size_t b = a + 1; b < rows.size(); ++b) {
      PairedComparison c = compare_paired(rows[a].total_by_seed, rows[b].total_by_seed);
      c.blocks = compare_blocks(rows[a].cost_by_block, rows[b].cost_by_block, blocks_per_seed(rows[a], rows[b]));
      if (c.blocks) c.separated = c.blocks->separated;
      if (c.seeds > 0) pairs.push_back({a, b, c});
    }
  return pairs;
}

}  // namespace

CapacityAnalysis analyze_capacity(const SweepSpec& spec, const Aggregate& aggregate, const DetectorRegistry& registry,
                                  const CostWeights& weights) {
  std::map<std::pair<std::size_t, std::vector<std::size_t>>, std::vector<SweepCell>> groups;
  for (const SweepCell& cell : expand_cells(spec)) groups[{cell.scenario, cell.values}].push_back(cell);

  CapacityAnalysis analysis;
  analysis.weights = weights;
  analysis.missing_cells = aggregate.missing_cells;
  analysis.planned_cells = aggregate.planned_cells;
  for (const auto& [key, cells] : groups) {
    const Scenario scenario = cell_scenario(spec, cells.front(), registry);
    const ParamList params = cell_params(spec, cells.front());
    const std::string& name = spec.scenarios[key.first].name;
    const double duration_s = sim::to_seconds(scenario.duration);
    const double interval_s = sim::to_seconds(scenario.job.checkpoint_interval);
    const double cost_s = sim::to_seconds(scenario.job.checkpoint_cost);
    const double gpus = scenario.job.gpus;
    double failures = 0;
    std::map<std::uint64_t, RunResult> runs;  // by seed
    for (const SweepCell& cell : cells) {
      const fs::path summary = cell_folder(spec, cell) / "summary.json";
      if (!fs::exists(summary)) continue;
      const RunResult& run = runs[cell.seed] = read_run(summary, duration_s, gpus);
      failures += run.failures;
    }
    if (runs.empty()) continue;
    for (const AggregateRow& row : aggregate.rows) {
      if (row.scenario != name || row.params != params) continue;
      CapacityRow out;
      out.scenario = name;
      out.params = params;
      out.detector = row.detector;
      out.checkpoint_interval_s = interval_s;
      out.checkpoint_cost_s = cost_s;
      out.lost_gpu_hours = row.metrics.at("lost_gpu_hours");
      out.checkpoint_gpu_hours = std::floor(duration_s / interval_s) * cost_s * gpus / 3600;
      out.spare_gpu_hours = scenario.job.spare_hosts * scenario.cluster.gpus_per_host * duration_s / 3600;
      add_seed_costs(runs, weights, out);
      out.job_failures = failures / static_cast<double>(runs.size());
      if (out.job_failures > 0) {
        out.mtbf_s = duration_s / out.job_failures;
        out.young_daly_s = std::sqrt(2 * cost_s * out.mtbf_s);
      }
      analysis.rows.push_back(std::move(out));
    }
  }
  std::stable_sort(analysis.rows.begin(), analysis.rows.end(), [](const CapacityRow& a, const CapacityRow& b) {
    if ((a.total_gpu_hours.n == 0) != (b.total_gpu_hours.n == 0)) return b.total_gpu_hours.n == 0;
    return a.total_gpu_hours.mean < b.total_gpu_hours.mean;
  });
  analysis.pairs = all_pairs(analysis.rows);
  if (!analysis.rows.empty() && analysis.rows.front().total_gpu_hours.n > 0) {
    const CapacityRow& best = analysis.rows.front();
    analysis.young_daly_s = best.young_daly_s;
    analysis.best_interval_s = best.checkpoint_interval_s;
    analysis.comparison = compare(analysis, best);
  }
  return analysis;
}

namespace {

std::string with_interval(const Estimate& e) {
  char text[64];
  if (e.n == 0) return "-";
  if (std::isnan(e.half_width))
    std::snprintf(text, sizeof text, "%.1f", e.mean);
  else
    std::snprintf(text, sizeof text, "%.1f ± %.1f", e.mean, e.half_width);
  return text;
}

// Each row against the best, paired by seed, then by block within seeds.
std::string paired_lines(const CapacityAnalysis& analysis) {
  std::string out =
      "\npaired by seed against rank 1 (this row's cost minus rank 1's, over the seeds both ran; then over equal "
      "time blocks of those runs, which decide when there are blocks):\n";
  char line[256];
  for (const CapacityPair& pair : analysis.pairs) {
    if (pair.a != 0) continue;
    const PairedComparison& c = pair.comparison;
    std::string needed = "-";
    if (c.seeds_needed) needed = std::to_string(*c.seeds_needed);
    std::snprintf(line, sizeof line,
                  "  rank %-3zu seeds  %22s GPU-h  %-14s costlier in %d of %d seeds; seeds to separate: %s\n",
                  pair.b + 1, with_interval(c.difference).c_str(),
                  c.seeds < 2         ? "(one seed)"
                  : c.seeds_separated ? "(excludes 0)"
                                      : "(includes 0)",
                  c.b_costlier, c.seeds, needed.c_str());
    out += line;
    if (!c.blocks) continue;
    const BlockComparison& b = *c.blocks;
    std::snprintf(line, sizeof line,
                  "           blocks %22s GPU-h  %-14s costlier in %d of %d blocks (%d a seed, lag-1 %.2f)\n",
                  with_interval(b.difference).c_str(), b.separated ? "(excludes 0)" : "(includes 0)", b.b_costlier,
                  b.blocks, b.per_seed, b.lag1);
    out += line;
  }
  return out;
}

}  // namespace

std::string capacity_table(const CapacityAnalysis& analysis) {
  std::size_t width = 8;
  for (const CapacityRow& row : analysis.rows) width = std::max(width, params_text(row.params).size());
  std::string out;
  char line[1024];
  if (!analysis.missing_cells.empty()) {
    std::snprintf(line, sizeof line, "INTERIM: %zu of %d cells have no results yet (listed on stderr)\n\n",
                  analysis.missing_cells.size(), analysis.planned_cells);
    out += line;
  }
  const CostWeights& w = analysis.weights;
  std::snprintf(line, sizeof line, "cost = %g x lost + %g x checkpoint + %g x spare GPU-hours\n", w.lost, w.checkpoints,
                w.spares);
  out += line;
  std::snprintf(line, sizeof line, "%-4s %-*s %-10s %20s %20s %10s %10s %8s %10s\n", "rank", static_cast<int>(width),
                "setting", "detector", "cost GPU-h", "lost to failures", "ckpt GPU-h", "spares", "failures",
                "young/daly");
  out += line;
  int rank = 0;
  for (const CapacityRow& row : analysis.rows) {
    std::snprintf(line, sizeof line, "%-4d %-*s %-10s %20s %20s %10.1f %10.0f %8.1f %10s\n", ++rank,
                  static_cast<int>(width), params_text(row.params).c_str(), row.detector.c_str(),
                  with_interval(row.total_gpu_hours).c_str(), with_interval(row.lost_gpu_hours).c_str(),
                  row.checkpoint_gpu_hours, row.spare_gpu_hours, row.job_failures,
                  row.young_daly_s > 0 ? hours(row.young_daly_s).c_str() : "-");
    out += line;
  }
  if (analysis.rows.size() > 1) out += paired_lines(analysis);
  if (!analysis.comparison.empty()) out += "\n" + analysis.comparison + "\n";
  return out;
}

nlohmann::ordered_json capacity_json(const CapacityAnalysis& analysis) {
  auto estimate = [](const Estimate& e) {
    nlohmann::ordered_json j;
    j["n"] = e.n;
    j["mean"] = e.n > 0 ? nlohmann::ordered_json(e.mean) : nlohmann::ordered_json();
    j["ci95_half_width"] =
        std::isnan(e.half_width) || e.n == 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(e.half_width);
    return j;
  };
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const CapacityRow& row : analysis.rows) {
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    for (const auto& [path, value] : row.params) params[path] = value;
    rows.push_back({{"scenario", row.scenario},
                    {"params", params},
                    {"detector", row.detector},
                    {"checkpoint_interval_s", row.checkpoint_interval_s},
                    {"checkpoint_cost_s", row.checkpoint_cost_s},
                    {"total_gpu_hours", estimate(row.total_gpu_hours)},
                    {"lost_gpu_hours", estimate(row.lost_gpu_hours)},
                    {"checkpoint_gpu_hours", row.checkpoint_gpu_hours},
                    {"spare_gpu_hours", row.spare_gpu_hours},
                    {"job_failures", row.job_failures},
                    {"mtbf_s", row.mtbf_s},
                    {"young_daly_s", row.young_daly_s}});
  }
  nlohmann::ordered_json pairs = nlohmann::ordered_json::array();
  for (const CapacityPair& pair : analysis.pairs) {
    const PairedComparison& c = pair.comparison;
    nlohmann::ordered_json blocks;  // null without blocks
    if (c.blocks)
      blocks = {{"seeds", c.blocks->seeds},
                {"per_seed", c.blocks->per_seed},
                {"blocks", c.blocks->blocks},
                {"difference_gpu_hours", estimate(c.blocks->difference)},
                {"b_costlier_blocks", c.blocks->b_costlier},
                {"lag1_autocorrelation", c.blocks->lag1},
                {"separated", c.blocks->separated}};
    pairs.push_back(
        {{"a", pair.a + 1},
         {"b", pair.b + 1},
         {"seeds", c.seeds},
         {"difference_gpu_hours", estimate(c.difference)},
         {"b_costlier_seeds", c.b_costlier},
         {"seeds_separated", c.seeds_separated},
         {"seeds_needed", c.seeds_needed ? nlohmann::ordered_json(*c.seeds_needed) : nlohmann::ordered_json()},
         {"blocks", blocks},
         {"separated", c.separated},
         {"separated_by", c.blocks ? "blocks" : "seeds"}});
  }
  nlohmann::ordered_json j;
  j["complete"] = analysis.missing_cells.empty();
  j["missing_cells"] = analysis.missing_cells;
  j["weights"] = {{"lost", analysis.weights.lost},
                  {"checkpoints", analysis.weights.checkpoints},
                  {"spares", analysis.weights.spares}};
  j["rows"] = rows;
  j["pairs"] = pairs;
  j["best"] = rows.empty() ? nlohmann::ordered_json() : rows.front();
  j["young_daly_s"] = analysis.young_daly_s;
  j["best_interval_s"] = analysis.best_interval_s;
  j["comparison"] = analysis.comparison;
  return j;
}

namespace {

// Nine significant digits: "%f" turned a 1 ns interval (1.7e-11 min) into
// 0, which a log axis cannot place.
std::string plot_number(double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

// A log axis over the intervals, padded; a linear one around a single
// interval (or where a log axis cannot go).
std::string x_axis(double lo, double hi) {
  if (lo > 0 && hi > lo && std::isfinite(hi))
    return "set logscale x\nset xrange [" + plot_number(lo / 1.5) + ":" + plot_number(hi * 1.5) + "]\n";
  const double pad = std::max(std::fabs(lo) * 0.5, 1e-12);
  return "set xrange [" + plot_number(lo - pad) + ":" + plot_number(hi + pad) + "]\n";
}

// Each setting's cost minus the best's, with the interval that decides
// (by block when there are blocks, else by seed): a bar that clears 0 is a
// setting the plan separates from the best.
std::string paired_figure(const CapacityAnalysis& analysis) {
  std::string data = "$d << EOD\n", tics;
  int shown = 0;
  for (const CapacityPair& pair : analysis.pairs) {
    if (pair.a != 0 || shown >= 20) continue;
    const PairedComparison& c = pair.comparison;
    const Estimate& e = c.blocks ? c.blocks->difference : c.difference;
    const double half = std::isfinite(e.half_width) ? e.half_width : 0;
    data += plot_number(e.mean) + " " + plot_number(shown) + " " + plot_number(half) + "\n";
    tics += std::string(tics.empty() ? "" : ", ") + gnuplot_quote("rank " + std::to_string(pair.b + 1)) + " " +
            std::to_string(shown);
    ++shown;
  }
  if (shown == 0) return "";
  data += "EOD\n";
  const std::string script = data + "set ytics (" + tics + ")\nset yrange [-1:" + std::to_string(shown) + "]\n" +
                             "set arrow from 0, graph 0 to 0, graph 1 nohead lc rgb '#808080'\n" +
                             "set xlabel 'cost minus rank 1 (GPU-hours)'\nset grid lc rgb '#e0e0e0'\nunset key\n" +
                             "plot $d using 1:2:3 with xerrorbars pt 7 ps 0.8 lw 1.5\n";
  return html::figure(render_svg(script, {760, 120 + 24 * shown}, "capacity-pairs-"),
                      "each setting against rank 1, paired: mean difference and its 95% interval, by time block "
                      "within the seeds' runs where there are blocks, else by seed");
}

}  // namespace

std::string capacity_html(const CapacityAnalysis& analysis) {
  std::map<std::string, std::vector<const CapacityRow*>> series;
  std::vector<std::string> names;
  for (const CapacityRow& row : analysis.rows) {
    if (row.total_gpu_hours.n == 0) continue;
    const std::string name = row.scenario + " " + row.detector + " " + params_text(row.params, kIntervalPath);
    if (!series.count(name)) names.push_back(name);
    series[name].push_back(&row);
  }
  std::string body = "<h2>Capacity: lost GPU-hours against the checkpoint interval</h2>\n<p>" +
                     html::escape(analysis.comparison) + "</p>\n";
  if (series.empty()) return body;
  std::string script, plots;
  double lo = 1e300, hi = 0;
  for (std::size_t s = 0; s < names.size() && s < 10; ++s) {
    auto points = series[names[s]];
    std::sort(points.begin(), points.end(), [](const CapacityRow* a, const CapacityRow* b) {
      return a->checkpoint_interval_s < b->checkpoint_interval_s;
    });
    script += "$s" + std::to_string(s) + " << EOD\n";
    for (const CapacityRow* row : points) {
      const double minutes = row->checkpoint_interval_s / 60;
      lo = std::min(lo, minutes), hi = std::max(hi, minutes);
      script += plot_number(minutes) + " " + plot_number(row->total_gpu_hours.mean) + " " +
                plot_number(half_width(row->total_gpu_hours)) + "\n";
    }
    script += "EOD\n";
    plots += std::string(plots.empty() ? "plot " : ", ") + "$s" + std::to_string(s) +
             " using 1:2:3 with yerrorlines lw 1.5 pt 7 ps 0.8 title " + gnuplot_quote(names[s]);
  }
  if (analysis.young_daly_s > 0) {
    const double yd = analysis.young_daly_s / 60;
    lo = std::min(lo, yd), hi = std::max(hi, yd);
    script += "set arrow from " + plot_number(yd) + ", graph 0 to " + plot_number(yd) +
              ", graph 1 nohead dt 2 lc rgb '#808080'\nset label 'Young/Daly' at " + plot_number(yd) +
              ", graph 0.95 offset 0.5,0 font ',9'\n";
  }
  script += x_axis(lo, hi);
  script += "set xlabel 'checkpoint interval (min)'\nset ylabel 'GPU-hours lost (failures + checkpoints)'\n";
  script += "set key outside bottom center horizontal font ',9'\nset grid lc rgb '#e0e0e0'\n";
  return body +
         html::figure(render_svg(script + plots + "\n", {760, 420}, "capacity-"),
                      "total lost GPU-hours (mean, 95% CI over seeds) against the checkpoint interval") +
         paired_figure(analysis);
}

}  // namespace gauntlet::harness
