#include "harness/report/aggregate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "harness/report/gnuplot.hpp"
#include "harness/report/html.hpp"
#include "harness/report/json_file.hpp"
#include "harness/scenario/input_error.hpp"
#include "sim/time.hpp"
#include "sim/units.hpp"

namespace gauntlet::harness {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

struct FoundRun {
  fs::path dir;
  CellInfo cell;
  json detectors;
};

std::optional<double> metric_value(const json& detector, const std::string& key) {
  if (key == "latency_p50_s") {
    auto it = detector.find("detection_latency_s");
    if (it == detector.end() || !it->is_object() || !it->contains("p50") || !(*it)["p50"].is_number())
      return std::nullopt;  // nothing detected: no latency sample from this seed
    return (*it)["p50"].get<double>();
  }
  auto it = detector.find(key);
  if (it == detector.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

FoundRun read_found_run(const fs::path& dir) {
  FoundRun run;
  run.dir = dir;
  const fs::path summary_path = dir / "summary.json";
  const json summary = read_json_file(summary_path);
  if (!summary.is_object() || !summary.contains("scenario") || !summary["scenario"].is_string() ||
      !summary.contains("seed") || !summary["seed"].is_number_unsigned() || !summary.contains("detectors") ||
      !summary["detectors"].is_object())
    throw InputError(summary_path.string(), 1, 1, "not a gauntlet summary: needs scenario, seed and detectors");
  run.detectors = summary["detectors"];
  run.cell.scenario = summary["scenario"].get<std::string>();
  run.cell.seed = summary["seed"].get<std::uint64_t>();
  const fs::path cell_path = dir / "cell.json";
  if (fs::exists(cell_path)) {
    const json cell = read_json_file(cell_path);
    if (!cell.is_object() || !cell.contains("params") || !cell["params"].is_object())
      throw InputError(cell_path.string(), 1, 1, "cell.json needs a params object");
    run.cell.sweep = cell.value("sweep", std::string());
    for (const auto& [path, value] : cell["params"].items())
      run.cell.params.emplace_back(path, value.is_string() ? value.get<std::string>() : value.dump());
  }
  return run;
}

// Numbers compare as numbers, everything else as text.
bool value_less(const std::string& a, const std::string& b) {
  const auto x = numeric_parameter(a), y = numeric_parameter(b);
  if (x && y && *x != *y) return *x < *y;
  if (x.has_value() != y.has_value()) return x.has_value();
  return a < b;
}

bool params_less(const ParamList& a, const ParamList& b) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i].first != b[i].first) return a[i].first < b[i].first;
    if (a[i].second != b[i].second) return value_less(a[i].second, b[i].second);
  }
  return a.size() < b.size();
}

std::string params_text(const ParamList& params, const std::string& skip = "") {
  std::string out;
  for (const auto& [path, value] : params) {
    if (path == skip) continue;
    out += (out.empty() ? "" : " ") + path + "=" + value;
  }
  return out;
}

std::string format_estimate(const Estimate& e, const char* format) {
  if (e.n == 0) return "-";
  char mean[48], half[48];
  std::snprintf(mean, sizeof mean, format, e.mean);
  if (std::isnan(e.half_width)) return mean;
  std::snprintf(half, sizeof half, format, e.half_width);
  return std::string(mean) + "±" + half;
}

std::string number(double value) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  return buffer;
}

}  // namespace

std::string cell_json(const CellInfo& cell) {
  json params = json::object();
  for (const auto& [path, value] : cell.params) params[path] = value;
  return json{{"sweep", cell.sweep}, {"scenario", cell.scenario}, {"params", params}, {"seed", cell.seed}}.dump(2) +
         "\n";
}

const std::vector<MetricInfo>& aggregated_metrics() {
  static const std::vector<MetricInfo> kMetrics = {
      {"recall", "recall", "%.2f"},
      {"precision", "precision", "%.2f"},
      {"latency_p50_s", "latency_p50_s", "%.1f"},
      {"localization_top1", "top1", "%.2f"},
      {"false_alerts", "false", "%.1f"},
      {"lost_iterations", "lost_it", "%.1f"},
      {"lost_gpu_hours", "lost_gpuh", "%.2f"},
  };
  return kMetrics;
}

std::optional<double> numeric_parameter(const std::string& value) {
  if (value.empty()) return std::nullopt;
  char* end = nullptr;
  const double plain = std::strtod(value.c_str(), &end);
  if (end == value.c_str() + value.size() && std::isfinite(plain)) return plain;
  if (auto duration = sim::parse_duration(value)) return sim::to_seconds(*duration);
  if (auto bytes = sim::parse_bytes(value)) return static_cast<double>(*bytes);
  return std::nullopt;
}

std::string sweep_plan_json(const std::string& sweep, const std::vector<std::string>& cell_folders) {
  return json{{"sweep", sweep}, {"cells", cell_folders}}.dump(1) + "\n";
}

namespace {

// The planned cells under `folder` that have no summary.json.
void check_plan(const fs::path& folder, Aggregate& aggregate) {
  const fs::path plan_path = folder / "sweep.json";
  if (!fs::exists(plan_path)) return;
  const json plan = read_json_file(plan_path);
  if (!plan.is_object() || !plan.contains("cells") || !plan["cells"].is_array())
    throw InputError(plan_path.string(), 1, 1, "a sweep plan needs a cells list");
  for (const json& cell : plan["cells"]) {
    if (!cell.is_string()) throw InputError(plan_path.string(), 1, 1, "a sweep plan's cells are folder names");
    ++aggregate.planned_cells;
    if (!fs::exists(folder / cell.get<std::string>() / "summary.json"))
      aggregate.missing_cells.push_back(cell.get<std::string>());
  }
}

}  // namespace

Aggregate aggregate_runs(const std::vector<fs::path>& folders) {
  std::vector<fs::path> run_dirs;
  Aggregate aggregate;
  for (const fs::path& folder : folders) {
    if (!fs::is_directory(folder)) throw InputError(folder.string(), 1, 1, "no such folder");
    check_plan(folder, aggregate);
    if (fs::exists(folder / "summary.json")) run_dirs.push_back(folder);
    for (auto it = fs::recursive_directory_iterator(folder); it != fs::recursive_directory_iterator(); ++it) {
      if (it->is_directory() && it->path().filename().string().starts_with(".")) {
        it.disable_recursion_pending();
        continue;
      }
      if (it->is_directory() && fs::exists(it->path() / "summary.json")) run_dirs.push_back(it->path());
    }
  }
  std::sort(run_dirs.begin(), run_dirs.end());

  struct Cell {
    std::string scenario;
    ParamList params;
    std::vector<std::string> detectors;
    std::vector<std::pair<std::uint64_t, json>> seeds;
  };
  std::vector<Cell> cells;
  std::set<std::string> seen_runs;
  for (const fs::path& dir : run_dirs) {
    FoundRun run = read_found_run(dir);
    for (const auto& [name, detector] : run.detectors.items()) {
      const std::string status = detector.is_object() ? detector.value("status", std::string("ok")) : "ok";
      if (status.starts_with("failed: "))
        aggregate.failed_detectors.push_back(dir.string() + ": " + name + " FAILED: " + status.substr(8));
    }
    const std::string cell_key = run.cell.scenario + "\n" + params_text(run.cell.params);
    const std::string run_key = cell_key + "\n" + std::to_string(run.cell.seed);
    if (!seen_runs.insert(run_key).second) {
      aggregate.warnings.push_back(dir.string() + ": the same cell and seed was already read; skipped");
      continue;
    }
    ++aggregate.runs;
    for (const auto& [path, value] : run.cell.params)
      if (std::find(aggregate.parameters.begin(), aggregate.parameters.end(), path) == aggregate.parameters.end())
        aggregate.parameters.push_back(path);
    auto cell = std::find_if(cells.begin(), cells.end(), [&](const Cell& c) {
      return c.scenario == run.cell.scenario && c.params == run.cell.params;
    });
    if (cell == cells.end()) {
      cells.push_back({run.cell.scenario, run.cell.params, {}, {}});
      cell = cells.end() - 1;
    }
    for (const auto& [name, ignored] : run.detectors.items())
      if (std::find(cell->detectors.begin(), cell->detectors.end(), name) == cell->detectors.end())
        cell->detectors.push_back(name);
    cell->seeds.emplace_back(run.cell.seed, run.detectors);
  }
  std::stable_sort(cells.begin(), cells.end(), [](const Cell& a, const Cell& b) {
    if (a.scenario != b.scenario) return a.scenario < b.scenario;
    return params_less(a.params, b.params);
  });

  for (Cell& cell : cells) {
    std::sort(cell.seeds.begin(), cell.seeds.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const std::string& detector : cell.detectors) {
      AggregateRow row{cell.scenario, cell.params, detector, {}, {}};
      std::map<std::string, std::vector<double>> samples;
      for (const auto& [seed, detectors] : cell.seeds) {
        if (!detectors.contains(detector)) continue;
        row.seeds.push_back(seed);
        for (const MetricInfo& m : aggregated_metrics())
          if (auto v = metric_value(detectors[detector], m.key)) samples[m.key].push_back(*v);
      }
      for (const MetricInfo& m : aggregated_metrics()) row.metrics[m.key] = estimate_mean(samples[m.key]);
      aggregate.rows.push_back(std::move(row));
    }
  }
  return aggregate;
}

std::string aggregate_table(const Aggregate& aggregate) {
  std::size_t cell_width = 8, detector_width = 8;
  for (const AggregateRow& row : aggregate.rows) {
    cell_width = std::max(cell_width, row.scenario.size() + 1 + params_text(row.params).size());
    detector_width = std::max(detector_width, row.detector.size());
  }
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %-*s %5s", static_cast<int>(cell_width), "cell",
                static_cast<int>(detector_width), "detector", "seeds");
  out += line;
  for (const MetricInfo& m : aggregated_metrics()) {
    std::snprintf(line, sizeof line, " %15s", m.label);
    out += line;
  }
  out += "\n";
  for (const AggregateRow& row : aggregate.rows) {
    const std::string params = params_text(row.params);
    const std::string cell = row.scenario + (params.empty() ? "" : " " + params);
    std::snprintf(line, sizeof line, "%-*s %-*s %5zu", static_cast<int>(cell_width), cell.c_str(),
                  static_cast<int>(detector_width), row.detector.c_str(), row.seeds.size());
    out += line;
    for (const MetricInfo& m : aggregated_metrics()) {
      // "±" is two bytes in UTF-8 but one column: pad by hand.
      const std::string text = format_estimate(row.metrics.at(m.key), m.format);
      const std::size_t columns = text.size() - (text.find("±") != std::string::npos ? 1 : 0);
      out += " " + std::string(columns < 15 ? 15 - columns : 0, ' ') + text;
    }
    out += "\n";
  }
  out +=
      "values: mean±half-width of the 95% confidence interval over seeds (Student t); latency over the seeds "
      "with a detection\n";
  return out;
}

namespace {

std::string aggregate_html_table(const Aggregate& aggregate) {
  std::string out = "<table>\n<tr><th class=\"name\">scenario</th>";
  for (const std::string& p : aggregate.parameters) out += "<th class=\"name\">" + html::escape(p) + "</th>";
  out += "<th class=\"name\">detector</th><th>seeds</th>";
  for (const MetricInfo& m : aggregated_metrics()) out += "<th>" + html::escape(m.label) + "</th>";
  out += "</tr>\n";
  for (const AggregateRow& row : aggregate.rows) {
    out += "<tr><td class=\"name\">" + html::escape(row.scenario) + "</td>";
    for (const std::string& p : aggregate.parameters) {
      std::string value = "-";
      for (const auto& [path, v] : row.params)
        if (path == p) value = v;
      out += "<td class=\"name\">" + html::escape(value) + "</td>";
    }
    out +=
        "<td class=\"name\">" + html::escape(row.detector) + "</td><td>" + std::to_string(row.seeds.size()) + "</td>";
    for (const MetricInfo& m : aggregated_metrics())
      out += "<td>" + html::escape(format_estimate(row.metrics.at(m.key), m.format)) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

// One plot: metric against one parameter, one line per detector and
// combination of the other parameters, with 95% intervals as error bars.
std::string curve_script(const Aggregate& aggregate, const std::string& parameter, const MetricInfo& metric) {
  std::vector<std::string> values;  // distinct values of the parameter, sorted
  for (const AggregateRow& row : aggregate.rows)
    for (const auto& [path, v] : row.params)
      if (path == parameter && std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
  if (values.size() < 2) return "";
  std::sort(values.begin(), values.end(), value_less);
  bool numeric = true;
  for (const std::string& v : values) numeric = numeric && numeric_parameter(v).has_value();

  std::vector<std::string> series_names;
  std::map<std::string, std::vector<std::pair<double, Estimate>>> series;
  for (const AggregateRow& row : aggregate.rows) {
    std::optional<std::string> value;
    for (const auto& [path, v] : row.params)
      if (path == parameter) value = v;
    if (!value) continue;
    const std::string rest = params_text(row.params, parameter);
    const std::string name = row.scenario + " " + row.detector + (rest.empty() ? "" : " " + rest);
    const Estimate& e = row.metrics.at(metric.key);
    if (e.n == 0) continue;
    const double x = numeric ? *numeric_parameter(*value)
                             : static_cast<double>(std::find(values.begin(), values.end(), *value) - values.begin());
    if (!series.count(name)) series_names.push_back(name);
    series[name].emplace_back(x, e);
  }
  if (series.empty()) return "";
  std::string script, plots;
  const std::size_t max_series = 10;
  for (std::size_t s = 0; s < series_names.size() && s < max_series; ++s) {
    auto& points = series[series_names[s]];
    std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::string rows;
    for (const auto& [x, e] : points)
      rows += number(x) + " " + number(e.mean) + " " + number(std::isnan(e.half_width) ? 0 : e.half_width) + "\n";
    script += "$s" + std::to_string(s) + " << EOD\n" + rows + "EOD\n";
    plots += std::string(plots.empty() ? "plot " : ", ") + "$s" + std::to_string(s) +
             " using 1:2:3 with yerrorlines lw 1.5 pt 7 ps 0.8 title " + gnuplot_quote(series_names[s]);
  }
  if (numeric) {
    const double lo = *numeric_parameter(values.front()), hi = *numeric_parameter(values.back());
    if (lo > 0 && hi / lo >= 50) {
      script += "set logscale x\nset xrange [" + number(lo / 1.5) + ":" + number(hi * 1.5) + "]\n";
    } else {
      const double pad = (hi - lo) * 0.05;
      script += "set xrange [" + number(lo - pad) + ":" + number(hi + pad) + "]\n";
    }
  } else {
    script += "set xtics (";
    for (std::size_t i = 0; i < values.size(); ++i)
      script += (i ? ", " : "") + gnuplot_quote(values[i]) + " " + std::to_string(i);
    script += ")\nset xrange [-0.5:" + number(static_cast<double>(values.size()) - 0.5) + "]\n";
  }
  script += "set xlabel " + gnuplot_quote(parameter) + "\nset ylabel " + gnuplot_quote(metric.label) + "\n";
  script += "set title " + gnuplot_quote(std::string(metric.label) + " vs " + parameter + " (mean, 95% CI)") + "\n";
  script += "set key outside bottom center horizontal font ',9'\nset grid lc rgb '#e0e0e0'\n";
  if (std::string(metric.key) == "recall" || std::string(metric.key) == "precision") script += "set yrange [0:1.05]\n";
  return script + plots + "\n";
}

}  // namespace

std::string aggregate_report_html(const Aggregate& aggregate, const std::string& title, const std::string& sections) {
  std::string body = "<h1>" + html::escape(title) + "</h1>\n";
  body += "<p class=\"meta\">" + std::to_string(aggregate.runs) + " runs, " + std::to_string(aggregate.rows.size()) +
          " cell-detector rows; values are mean ± half-width of the 95% confidence interval over seeds (Student "
          "t).</p>\n";
  body += "<h2>Scores</h2>\n" + aggregate_html_table(aggregate) + sections;
  int plot = 0;
  for (const std::string& parameter : aggregate.parameters) {
    std::string figures;
    for (const char* key : {"recall", "latency_p50_s", "lost_iterations", "false_alerts"}) {
      const MetricInfo* metric = nullptr;
      for (const MetricInfo& m : aggregated_metrics())
        if (std::string(m.key) == key) metric = &m;
      const std::string script = curve_script(aggregate, parameter, *metric);
      if (script.empty()) continue;
      figures += html::figure(render_svg(script, {560, 380}, "curve" + std::to_string(plot++) + "-"),
                              std::string(metric->label) + " against " + parameter);
    }
    if (!figures.empty())
      body += "<h2>Against " + html::escape(parameter) + "</h2>\n<div class=\"grid\">\n" + figures + "</div>\n";
  }
  if (!aggregate.warnings.empty()) {
    body += "<h2>Warnings</h2>\n<ul>\n";
    for (const std::string& w : aggregate.warnings) body += "<li>" + html::escape(w) + "</li>\n";
    body += "</ul>\n";
  }
  return html::page(title, body);
}

}  // namespace gauntlet::harness
