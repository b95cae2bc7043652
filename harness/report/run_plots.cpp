#include "harness/report/run_plots.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "harness/report/gnuplot.hpp"

namespace gauntlet::harness {
namespace {

struct TimeUnit {
  double seconds;
  const char* name;
};

// A unit that keeps the axis numbers readable for the run's length.
TimeUnit time_unit_for(double total_s) {
  if (total_s <= 600) return {1, "s"};
  if (total_s <= 6 * 3600) return {60, "min"};
  if (total_s <= 3 * 86400) return {3600, "h"};
  return {86400, "days"};
}

std::string number(double value) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  return buffer;
}

std::string data_block(const std::string& name, const std::string& rows) {
  return "$" + name + " << EOD\n" + rows + "EOD\n";
}

const char* const kSeriesColors[] = {"#1b9e77", "#d95f02", "#7570b3", "#e7298a",
                                     "#66a61e", "#e6ab02", "#a6761d", "#666666"};
const char* series_color(std::size_t i) { return kSeriesColors[i % (sizeof kSeriesColors / sizeof *kSeriesColors)]; }

// Per-bin mean (weighted by time covered), min and max iteration duration.
std::string binned_timeline_rows(const std::vector<models::IterationSpan>& spans, double end_s, double unit) {
  const double bin_s = end_s / static_cast<double>(kTimelineBins);
  std::vector<double> weighted(kTimelineBins, 0), covered(kTimelineBins, 0);
  std::vector<double> lo(kTimelineBins, std::numeric_limits<double>::infinity()), hi(kTimelineBins, 0);
  for (const models::IterationSpan& span : spans) {
    const double start = sim::to_seconds(span.start);
    const double end = start + sim::to_seconds(span.duration) * static_cast<double>(span.count);
    const double duration = sim::to_seconds(span.duration);
    const auto first = static_cast<std::size_t>(std::clamp(start / bin_s, 0.0, double(kTimelineBins - 1)));
    const auto last = static_cast<std::size_t>(std::clamp(end / bin_s, 0.0, double(kTimelineBins - 1)));
    for (std::size_t b = first; b <= last; ++b) {
      const double overlap = std::min(end, (b + 1) * bin_s) - std::max(start, b * bin_s);
      if (overlap <= 0 && !(span.count > 0 && b == first)) continue;
      weighted[b] += duration * std::max(overlap, 0.0);
      covered[b] += std::max(overlap, 0.0);
      lo[b] = std::min(lo[b], duration);
      hi[b] = std::max(hi[b], duration);
    }
  }
  std::string rows;
  for (std::size_t b = 0; b < kTimelineBins; ++b) {
    if (hi[b] <= 0) continue;
    const double mean = covered[b] > 0 ? weighted[b] / covered[b] : (lo[b] + hi[b]) / 2;
    rows += number((b + 0.5) * bin_s / unit) + " " + number(mean) + " " + number(lo[b]) + " " + number(hi[b]) + "\n";
  }
  return rows;
}

// The iterations data block: each span a flat segment from its first start
// to its last end, or per-bin figures when there are too many spans.
std::string iteration_rows(const RunView& run, double end_s, const TimeUnit& unit, bool binned) {
  if (binned) return data_block("iterations", binned_timeline_rows(run.timeline, end_s, unit.seconds));
  std::string rows;
  for (const auto& span : run.timeline) {
    const double start = sim::to_seconds(span.start);
    const double duration = sim::to_seconds(span.duration);
    rows += number(start / unit.seconds) + " " + number(duration) + "\n";
    rows += number((start + duration * static_cast<double>(span.count)) / unit.seconds) + " " + number(duration) + "\n";
  }
  return data_block("iterations", rows);
}

// Alert marks: one data block per detector, a row of marks above the
// tallest iteration; appends each block's plot clause to `plots`.
std::string alert_rows(const RunView& run, double longest, double end_s, const TimeUnit& unit, std::string& plots) {
  std::string script;
  for (std::size_t d = 0; d < run.detector_order.size(); ++d) {
    const std::string& name = run.detector_order[d];
    const auto it = run.alerts.find(name);
    std::string rows;
    const double level = longest * (1.08 + 0.07 * static_cast<double>(d));
    if (it != run.alerts.end()) {
      const std::vector<Alert>& alerts = it->second;
      const double min_gap = alerts.size() > kMaxAlertMarks ? end_s / kMaxAlertMarks : 0;
      double last = -std::numeric_limits<double>::infinity();
      for (const Alert& a : alerts) {
        if (a.time_s - last < min_gap) continue;
        last = a.time_s;
        rows += number(a.time_s / unit.seconds) + " " + number(level) + "\n";
      }
    }
    if (rows.empty()) rows = "NaN NaN\n";  // keeps the key entry for a silent detector
    script += data_block("alerts" + std::to_string(d), rows);
    plots +=
        ", $alerts" + std::to_string(d) + " using 1:2 with points pt 9 ps 1.3 lc rgb '" +
        std::string(series_color(d + 1)) + "' title " +
        gnuplot_quote("alerts: " + name + " (" + std::to_string(it != run.alerts.end() ? it->second.size() : 0) + ")");
  }
  return script;
}

// Injected fault windows as shaded rectangles, labelled while there are few
// (the healthy fleet's background conditions are not shaded: a month of a
// large fleet holds hundreds of thousands).
std::string fault_shading(const RunView& run, double end_s, const TimeUnit& unit) {
  std::string script;
  int object = 1;
  const auto injected =
      std::count_if(run.faults.begin(), run.faults.end(), [](const FaultEpisode& f) { return !f.background; });
  for (const FaultEpisode& f : run.faults) {
    if (f.background) continue;
    const double start = f.start_s / unit.seconds;
    double end = f.end_s.value_or(end_s) / unit.seconds;
    if (end <= start) end = start + end_s / unit.seconds / 400;  // keep instantaneous faults visible
    const char* color = f.benign ? "#9ecae1" : f.affected_job ? "#f4a582" : "#d9d9d9";
    script += "set object " + std::to_string(object++) + " rect from " + number(start) + ", graph 0 to " + number(end) +
              ", graph 1 fc rgb '" + color + "' fs transparent solid 0.35 noborder behind\n";
    if (injected <= 12)
      script += "set label " + std::to_string(object) + " " + gnuplot_quote(f.id + " " + f.type) + " at " +
                number(start) + ", graph 0.04 offset 0.3,0 font ',9' tc rgb '#7f2704' front\n";
  }
  return script;
}

}  // namespace

std::string iteration_time_script(const RunView& run) {
  if (run.timeline.empty()) return "";
  const double end_s = std::max(run.sim_seconds, 1e-9);
  const TimeUnit unit = time_unit_for(end_s);
  double longest = 0;
  for (const auto& span : run.timeline) longest = std::max(longest, sim::to_seconds(span.duration));
  if (longest <= 0) return "";

  const bool binned = run.timeline.size() > kMaxPlottedSpans;
  std::string plots;
  std::string script = iteration_rows(run, end_s, unit, binned) + alert_rows(run, longest, end_s, unit, plots);
  script += fault_shading(run, end_s, unit);
  script += "set xlabel " + gnuplot_quote(std::string("simulated time (") + unit.name + ")") + "\n";
  script += "set ylabel 'iteration time (s)'\n";
  script += "set xrange [0:" + number(end_s / unit.seconds) + "]\n";
  script += "set yrange [0:" + number(longest * (1.15 + 0.07 * static_cast<double>(run.detector_order.size()))) + "]\n";
  script += "set key outside bottom center horizontal\nset grid ytics lc rgb '#e0e0e0'\n";
  script += "set title " +
            gnuplot_quote(
                "iteration time; shaded: fault windows (orange: slowed the job, grey: "
                "did not, blue: benign)") +
            "\n";
  if (binned)
    script +=
        "plot $iterations using 1:3:4 with filledcurves fc rgb '#9ecae1' fs solid 0.5 title 'min-max per bin', "
        "$iterations using 1:2 with lines lw 1.5 lc rgb '#08519c' title 'mean per bin'" +
        plots + "\n";
  else
    script += "plot $iterations using 1:2 with lines lw 1.5 lc rgb '#08519c' title 'iteration time'" + plots + "\n";
  return script;
}

std::string latency_cdf_script(const RunView& run) {
  struct Curve {
    std::size_t index;
    std::vector<double> latencies;
    int scored = 0;
  };
  std::vector<Curve> curves;
  double longest = 0, shortest = std::numeric_limits<double>::infinity();
  for (std::size_t d = 0; d < run.detector_order.size(); ++d) {
    Curve curve{d, {}, 0};
    for (const FaultOutcome& f : run.scores.at(run.detector_order[d]).faults) {
      if (!f.scored) continue;
      ++curve.scored;
      if (f.detected) curve.latencies.push_back(std::max(f.detection_latency_s, 0.0));
    }
    if (curve.latencies.empty()) continue;
    std::sort(curve.latencies.begin(), curve.latencies.end());
    longest = std::max(longest, curve.latencies.back());
    shortest = std::min(shortest, curve.latencies.front());
    curves.push_back(std::move(curve));
  }
  if (curves.empty()) return "";
  const double right = longest > 0 ? longest * 1.3 : 1;
  std::string script, plots;
  for (const Curve& curve : curves) {
    std::string rows = number(curve.latencies.front()) + " 0\n";
    const double n = static_cast<double>(curve.scored);
    for (std::size_t i = 0; i < curve.latencies.size(); ++i)
      rows += number(curve.latencies[i]) + " " + number(double(i + 1) / n) + "\n";
    // Flat to the right edge, so a plateau below 1 (recall < 1) shows.
    rows += number(right) + " " + number(double(curve.latencies.size()) / n) + "\n";
    const std::string block = "cdf" + std::to_string(curve.index);
    script += data_block(block, rows);
    plots += std::string(plots.empty() ? "plot " : ", ") + "$" + block + " using 1:2 with steps lw 2 lc rgb '" +
             series_color(curve.index + 1) + "' title " + gnuplot_quote(run.detector_order[curve.index]);
  }
  const bool log_scale = shortest > 0 && longest / shortest > 100;
  if (log_scale) script += "set logscale x\n";
  script += "set xrange [" + number(log_scale ? shortest / 1.5 : 0) + ":" + number(right) + "]\n";
  script += "set yrange [0:1.05]\nset key right bottom\nset grid lc rgb '#e0e0e0'\n";
  script += "set xlabel 'detection latency (s)'\nset ylabel 'fraction of faults detected'\n";
  script += "set title 'detection latency CDF (levels off at recall)'\n";
  return script + plots + "\n";
}

std::string lost_iterations_script(const RunView& run) {
  // Labels in a data block are double-quoted fields.
  std::string rows =
      "\"no detection\" " +
      number(static_cast<double>(run.iterations_fault_free) - static_cast<double>(run.iterations_faulty)) + "\n";
  double highest =
      std::max(0.0, static_cast<double>(run.iterations_fault_free) - static_cast<double>(run.iterations_faulty));
  for (const std::string& name : run.detector_order) {
    std::string label;
    for (char c : name) label += c == '"' ? '\'' : c;
    const std::optional<RunCosts>& costs = run.scores.at(name).costs;
    if (!costs) continue;
    rows += "\"" + label + "\" " + number(costs->lost_iterations) + "\n";
    highest = std::max(highest, costs->lost_iterations);
  }
  std::string script = data_block("lost", rows);
  script += "set style fill solid 0.7 border -1\nset boxwidth 0.6\nunset key\nset grid ytics lc rgb '#e0e0e0'\n";
  script += "set yrange [0:" + number(highest > 0 ? highest * 1.2 : 1) + "]\n";
  script += "set xrange [-0.6:" + number(static_cast<double>(run.detector_order.size()) + 0.6) + "]\n";
  script += "set ylabel 'lost iterations'\nset title 'iterations lost against the fault-free run'\n";
  script +=
      "plot $lost using 0:2:xtic(1) with boxes lc rgb '#d95f02', $lost using 0:2:(sprintf('%.1f', $2)) with "
      "labels offset 0,0.8 notitle\n";
  return script;
}

}  // namespace gauntlet::harness
