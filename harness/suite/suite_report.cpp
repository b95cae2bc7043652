#include "harness/suite/suite_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "harness/report/gnuplot.hpp"
#include "harness/report/html.hpp"
#include "harness/scenario/input_error.hpp"

namespace gauntlet::harness {
namespace {

std::string format(const char* pattern, double value) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

// "0.85 [0.71-0.93]", or "-" with nothing to measure.
std::string interval_text(const Interval& i, const char* pattern) {
  if (!i.value) return "-";
  return format(pattern, *i.value) + " [" + format(pattern, i.low) + "-" + format(pattern, i.high) + "]";
}

struct Column {
  const char* header;
  std::string (*cell)(const ClassFigures&);
};

const std::vector<Column>& columns() {
  static const std::vector<Column> kColumns = {
      {"detected", [](const ClassFigures& c) { return std::to_string(c.detected) + "/" + std::to_string(c.episodes); }},
      {"recall", [](const ClassFigures& c) { return interval_text(c.recall, "%.2f"); }},
      {"precision", [](const ClassFigures& c) { return interval_text(c.precision, "%.2f"); }},
      {"top1", [](const ClassFigures& c) { return interval_text(c.top1, "%.2f"); }},
      {"top3", [](const ClassFigures& c) { return interval_text(c.top3, "%.2f"); }},
      {"latency_p50_s", [](const ClassFigures& c) { return interval_text(c.latency_p50_s, "%.0f"); }},
      {"latency_p95_s", [](const ClassFigures& c) { return interval_text(c.latency_p95_s, "%.0f"); }},
      {"caught_90",
       [](const ClassFigures& c) {
         if (c.magnitude_param.empty() || c.episodes < kMinTailForCaught90) return std::string("-");
         return c.caught_90 ? c.magnitude_param + ">=" + format("%.3g", *c.caught_90) : std::string("never");
       }},
  };
  return kColumns;
}

std::size_t column_width(const Column& column) { return std::string(column.header) == "detected" ? 8 : 17; }

std::string padded(const std::string& text, std::size_t width) {
  return text + std::string(text.size() < width ? width - text.size() : 0, ' ');
}

std::vector<std::string> class_order(const SuiteResult& r) {
  std::vector<std::string> order;
  if (!r.detectors.empty())
    for (const ClassFigures& c : r.detectors.front().classes) order.push_back(c.fault_class);
  return order;
}

const ClassFigures* find_class(const DetectorFigures& d, const std::string& fault_class) {
  for (const ClassFigures& c : d.classes)
    if (c.fault_class == fault_class) return &c;
  return nullptr;
}

std::string header_line(const SuiteResult& r) {
  return "suite " + r.suite + " v" + std::to_string(r.version) + ": " + std::to_string(r.records.size()) + " of " +
         std::to_string(r.planned_episodes) + " episodes, " + std::to_string(r.healthy_episodes) + " healthy (" +
         format("%.1f", r.healthy_hours) + " h)";
}

const char* const kColors[] = {"#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666"};

// Detection rate against magnitude, one line per detector, each bin at its
// geometric centre (the arithmetic one when it reaches 0).
std::string magnitude_script(const SuiteResult& r, const std::string& fault_class) {
  std::string script, plots, param;
  double lo = 0, hi = 0;
  for (std::size_t d = 0; d < r.detectors.size(); ++d) {
    const ClassFigures* c = find_class(r.detectors[d], fault_class);
    if (c == nullptr || c->curve.empty()) continue;
    param = c->magnitude_param;
    lo = c->curve.front().low, hi = c->curve.back().high;
    std::string rows;
    for (const MagnitudeBin& bin : c->curve) {
      const double x = bin.low > 0 ? std::sqrt(bin.low * bin.high) : (bin.low + bin.high) / 2;
      rows += format("%.9g", x) + " " + format("%.9g", *bin.rate.value) + " " + format("%.9g", bin.rate.low) + " " +
              format("%.9g", bin.rate.high) + "\n";
    }
    script += "$d" + std::to_string(d) + " << EOD\n" + rows + "EOD\n";
    plots += std::string(plots.empty() ? "plot " : ", ") + "$d" + std::to_string(d) +
             " using 1:2:3:4 with yerrorlines lw 1.5 pt 7 ps 0.8 lc rgb '" + kColors[d % 8] + "' title " +
             gnuplot_quote(r.detectors[d].name);
  }
  if (plots.empty()) return "";
  if (lo > 0 && hi / lo >= 20) script += "set logscale x\n";
  script += "set xrange [" + format("%.9g", lo > 0 && hi / lo >= 20 ? lo / 1.3 : lo - (hi - lo) * 0.05) + ":" +
            format("%.9g", lo > 0 && hi / lo >= 20 ? hi * 1.3 : hi + (hi - lo) * 0.05 + 1e-12) + "]\n";
  script += "set yrange [0:1.05]\nset xlabel " + gnuplot_quote(param) + "\nset ylabel 'detected'\n";
  script += "set title " + gnuplot_quote(fault_class + ": detection against " + param + " (95% Wilson)") + "\n";
  script += "set key outside bottom center horizontal font ',9'\nset grid lc rgb '#e0e0e0'\n";
  return script + plots + "\n";
}

// Recall per class, one line per detector over the classes.
std::string recall_script(const SuiteResult& r) {
  const std::vector<std::string> order = class_order(r);
  if (order.empty()) return "";
  std::string script = "set xtics rotate by -30 (", plots;
  for (std::size_t i = 0; i < order.size(); ++i)
    script += (i ? ", " : "") + gnuplot_quote(order[i]) + " " + std::to_string(i);
  script += ")\nset xrange [-0.5:" + std::to_string(order.size()) + "]\nset yrange [0:1.05]\nset ylabel 'recall'\n";
  script += "set title 'recall by fault class (95% Wilson)'\nset key outside bottom center horizontal font ',9'\n";
  for (std::size_t d = 0; d < r.detectors.size(); ++d) {
    std::string rows;
    for (std::size_t i = 0; i < order.size(); ++i) {
      const ClassFigures* c = find_class(r.detectors[d], order[i]);
      if (c == nullptr || !c->recall.value) continue;
      const double x = static_cast<double>(i) + 0.08 * (static_cast<double>(d) - r.detectors.size() / 2.0);
      rows += format("%.9g", x) + " " + format("%.9g", *c->recall.value) + " " + format("%.9g", c->recall.low) + " " +
              format("%.9g", c->recall.high) + "\n";
    }
    if (rows.empty()) continue;
    script += "$r" + std::to_string(d) + " << EOD\n" + rows + "EOD\n";
    plots += std::string(plots.empty() ? "plot " : ", ") + "$r" + std::to_string(d) +
             " using 1:2:3:4 with yerrorbars pt 7 ps 0.8 lc rgb '" + kColors[d % 8] + "' title " +
             gnuplot_quote(r.detectors[d].name);
  }
  return plots.empty() ? "" : script + plots + "\n";
}

// Precision against recall over a sweep's values, each point labelled with
// its value; the line follows the values in order.
std::string sweep_script(const SweepCurve& curve) {
  std::string rows;
  for (const SweepPoint& p : curve.points) {
    if (!p.recall.value || !p.precision.value) continue;
    rows += format("%.9g", *p.recall.value) + " " + format("%.9g", *p.precision.value) + " " + "\"" + p.value +
            (p.own ? " (own)" : "") + "\"\n";  // a data column: double quotes (values hold none)
  }
  if (rows.empty()) return "";
  return "$p << EOD\n" + rows + "EOD\n" + "set xrange [0:1.05]\nset yrange [0:1.05]\nset xlabel 'recall'\n" +
         "set ylabel 'precision'\nset grid lc rgb '#e0e0e0'\nset key off\n" + "set title " +
         gnuplot_quote(curve.detector + ": precision against recall over " + curve.param) + "\n" +
         "plot $p using 1:2 with linespoints lw 1.5 pt 7 ps 0.8 lc rgb '" + kColors[0] + "', " +
         "$p using 1:2:3 with labels offset 0.6,0.6 left font ',8'\n";
}

std::string sweep_lines(const SuiteResult& r) {
  std::string out;
  for (const SweepCurve& curve : r.sweeps) {
    out +=
        "\n" + curve.detector + ": threshold sweep over " + curve.param + " (all faults; precision over every alert)\n";
    for (const SweepPoint& p : curve.points)
      out += "  " + padded(curve.param + "=" + p.value + (p.own ? " (own)" : ""), 28) + " recall " +
             padded(interval_text(p.recall, "%.2f"), 17) + "  precision " +
             padded(interval_text(p.precision, "%.2f"), 17) + "  false alerts/healthy h " +
             interval_text(p.false_alerts_per_healthy_hour, "%.2f") + "\n";
  }
  return out;
}

}  // namespace

std::string suite_leaderboard(const SuiteResult& r) {
  std::string out = header_line(r) + "; 95% intervals: Wilson (proportions), bootstrap (latency, rates)\n";
  // The name column fits the longest detector name and a space, at least 12 wide.
  std::size_t name_width = 12;
  for (const DetectorFigures& d : r.detectors) name_width = std::max(name_width, d.name.size() + 1);
  const int width = static_cast<int>(name_width);
  for (const std::string& fault_class : class_order(r)) {
    const ClassFigures* first = find_class(r.detectors.front(), fault_class);
    out += "\n" + fault_class + " (" + std::to_string(first->episodes) + " episodes)\n";
    char line[512];
    std::snprintf(line, sizeof line, "%-*s", width, "detector");
    out += line;
    for (const Column& c : columns()) out += "  " + padded(c.header, column_width(c));
    while (out.back() == ' ') out.pop_back();
    out += "\n";
    for (const DetectorFigures& d : r.detectors) {
      const ClassFigures* c = find_class(d, fault_class);
      std::snprintf(line, sizeof line, "%-*s", width, d.name.c_str());
      out += line;
      for (const Column& column : columns()) out += "  " + padded(column.cell(*c), column_width(column));
      while (!out.empty() && out.back() == ' ') out.pop_back();
      out += "\n";
    }
  }
  out += "\nfalse alerts per healthy hour (" + std::to_string(r.healthy_episodes) + " healthy episodes):\n";
  for (const DetectorFigures& d : r.detectors) {
    out += "  " + padded(d.name, name_width) + interval_text(d.false_alerts_per_healthy_hour, "%.2f");
    if (d.failed_episodes > 0) out += "  (FAILED in " + std::to_string(d.failed_episodes) + " episodes)";
    if (d.background_alerts > 0)
      out += "  (" + std::to_string(d.background_alerts) + " false alerts on background noise)";
    out += "\n";
  }
  return out + sweep_lines(r);
}

std::string suite_report_html(const SuiteResult& r) {
  const std::string title = "gauntlet suite " + r.suite;
  std::string body = "<h1>" + html::escape(title) + "</h1>\n<p class=\"meta\">" + html::escape(header_line(r)) +
                     ". Values with their 95% interval over episodes: Wilson for proportions, percentile bootstrap "
                     "for latencies and rates. Each episode's record in summary.json holds the command that reruns "
                     "it.</p>\n";
  body +=
      "<div class=\"grid\">\n" + html::figure(render_svg(recall_script(r), {720, 400}, "recall-"), "recall by class");
  int plot = 0;
  for (const std::string& fault_class : class_order(r)) {
    const std::string script = magnitude_script(r, fault_class);
    if (!script.empty())
      body += html::figure(render_svg(script, {560, 380}, "mag" + std::to_string(plot++) + "-"),
                           fault_class + ": detection probability against magnitude");
  }
  for (std::size_t i = 0; i < r.sweeps.size(); ++i) {
    const std::string script = sweep_script(r.sweeps[i]);
    if (!script.empty())
      body += html::figure(render_svg(script, {560, 380}, "pr" + std::to_string(i) + "-"),
                           r.sweeps[i].detector + ": precision-recall over " + r.sweeps[i].param);
  }
  body += "</div>\n";
  if (!r.sweeps.empty()) body += "<h2>Threshold sweeps</h2>\n<pre>" + html::escape(sweep_lines(r)) + "</pre>\n";
  for (const std::string& fault_class : class_order(r)) {
    body += "<h2>" + html::escape(fault_class) + "</h2>\n<table>\n<tr><th>detector</th>";
    for (const Column& c : columns()) body += std::string("<th>") + c.header + "</th>";
    body += "</tr>\n";
    for (const DetectorFigures& d : r.detectors) {
      body += "<tr><td>" + html::escape(d.name) + "</td>";
      for (const Column& c : columns()) body += "<td>" + html::escape(c.cell(*find_class(d, fault_class))) + "</td>";
      body += "</tr>\n";
    }
    body += "</table>\n";
  }
  body += "<h2>False alerts per healthy hour</h2>\n<table>\n";
  for (const DetectorFigures& d : r.detectors)
    body += "<tr><td>" + html::escape(d.name) + "</td><td>" +
            html::escape(interval_text(d.false_alerts_per_healthy_hour, "%.2f")) + "</td></tr>\n";
  return html::page(title, body + "</table>\n");
}

namespace {

// What makes two records the same episode: its seed and everything drawn
// from it (shape, fault, target, times, parameters, background noise).
std::string episode_draw(const EpisodeRecord& r) {
  nlohmann::ordered_json draw = {{"seed", r.seed},     {"shape", r.shape},     {"type", r.type},
                                 {"target", r.target}, {"onset_s", r.onset_s}, {"background", r.background}};
  if (r.duration_s) draw["duration_s"] = *r.duration_s;
  for (const auto& [key, value] : r.params) draw["params"][key] = value;
  return draw.dump();
}

}  // namespace

std::string compare_suites(const SuiteResult& a, const std::string& a_name, const SuiteResult& b,
                           const std::string& b_name) {
  // One suite's two results pair by index; two suites (another name, version
  // or seed) pair the episodes they share, by seed and draw.
  const bool same_suite = a.suite == b.suite && a.version == b.version && a.seed == b.seed;
  std::map<std::size_t, const EpisodeRecord*> by_index;
  std::map<std::string, const EpisodeRecord*> by_draw;
  for (const EpisodeRecord& record : b.records) {
    by_index[record.index] = &record;
    by_draw.emplace(episode_draw(record), &record);
  }
  struct Pair {
    int only_a = 0, only_b = 0, both = 0, neither = 0;
  };
  std::map<std::string, Pair> pairs;
  std::vector<std::string> order;
  std::size_t shared = 0;
  for (const EpisodeRecord& ra : a.records) {
    const EpisodeRecord* rb = nullptr;
    if (same_suite) {
      auto it = by_index.find(ra.index);
      if (it != by_index.end() && it->second->seed != ra.seed)
        throw InputError(b_name, 0, 0, "episode " + std::to_string(ra.index) + " has another seed than in " + a_name);
      if (it != by_index.end()) rb = it->second;
    } else if (auto it = by_draw.find(episode_draw(ra)); it != by_draw.end()) {
      rb = it->second;
    }
    if (rb == nullptr) continue;
    ++shared;
    if (ra.type == "healthy" || ra.fault_class == kUnaffected) continue;
    // B's detectors by name (the first of a name, as a scan would find it):
    // one lookup each instead of a scan of B's list per detector of A.
    std::unordered_map<std::string_view, const DetectorEpisode*> in_b;
    for (const DetectorEpisode& db : rb->detectors) in_b.emplace(db.name, &db);
    for (const DetectorEpisode& da : ra.detectors) {
      const auto found = in_b.find(da.name);
      if (found == in_b.end()) continue;
      const DetectorEpisode& db = *found->second;
      if (!pairs.count(da.name)) order.push_back(da.name);
      Pair& p = pairs[da.name];
      (da.detected ? (db.detected ? p.both : p.only_a) : (db.detected ? p.only_b : p.neither)) += 1;
    }
  }
  if (!same_suite && shared == 0)
    throw InputError(b_name, 0, 0,
                     "suite " + b.suite + " v" + std::to_string(b.version) + " seed " + std::to_string(b.seed) +
                         " shares no episode (seed and draw) with " + a_name + "'s suite " + a.suite + " v" +
                         std::to_string(a.version) + " seed " + std::to_string(a.seed) + ": nothing to pair");
  std::string out = same_suite ? "paired by episode"
                               : "paired by episode seed and draw: " + std::to_string(shared) + " episodes of " +
                                     a.suite + " v" + std::to_string(a.version) + " and " + b.suite + " v" +
                                     std::to_string(b.version) + " are the same";
  out += ", McNemar exact test on detections (A = " + a_name + ", B = " + b_name + ")\n";
  out += "detector      episodes  both  only_A  only_B  neither  p-value  verdict\n";
  for (const std::string& name : order) {
    const Pair& p = pairs[name];
    const double pvalue = mcnemar_exact_p(p.only_a, p.only_b);
    const char* verdict = pvalue >= 0.05        ? "no significant difference"
                          : p.only_a > p.only_b ? "A detects more (significant)"
                                                : "B detects more (significant)";
    char line[256];
    std::snprintf(line, sizeof line, "%-12s  %8d  %4d  %6d  %6d  %7d  %7.4f  %s\n", name.c_str(),
                  p.both + p.only_a + p.only_b + p.neither, p.both, p.only_a, p.only_b, p.neither, pvalue, verdict);
    out += line;
  }
  return out;
}

}  // namespace gauntlet::harness
