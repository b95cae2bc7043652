#include "harness/report/run_report.hpp"

#include <cstdio>

#include "harness/report/gnuplot.hpp"
#include "harness/report/html.hpp"
#include "harness/report/run_plots.hpp"
#include "harness/report/trace.hpp"
#include "harness/runner/outputs.hpp"

namespace gauntlet::harness {
namespace {

std::string format(const char* pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

std::string td(const std::string& text) { return "<td>" + html::escape(text) + "</td>"; }

std::string scoreboard(const RunView& run) {
  std::string out =
      "<table>\n<tr><th class=\"name\">detector</th><th>precision</th><th>recall</th><th>detected</th>"
      "<th>latency mean</th><th>latency p50</th><th>latency p95</th><th>top-1</th><th>top-3</th><th>alerts</th>"
      "<th>false alerts</th><th>false isolations</th><th>lost iterations</th><th>lost GPU-hours</th>"
      "<th>probes</th></tr>\n";
  for (const std::string& name : run.detector_order) {
    const DetectorScore& s = run.scores.at(name);
    const bool detected = s.detected > 0;
    out += "<tr><td class=\"name\">" + html::escape(name) + "</td>" + td(format("%.2f", s.precision)) +
           td(format("%.2f", s.recall)) + td(std::to_string(s.detected) + "/" + std::to_string(s.scored_faults)) +
           td(detected ? format("%.1f s", s.detection_latency_s.mean) : "-") +
           td(detected ? format("%.1f s", s.detection_latency_s.p50) : "-") +
           td(detected ? format("%.1f s", s.detection_latency_s.p95) : "-") + td(format("%.2f", s.localization_top1)) +
           td(format("%.2f", s.localization_top3)) + td(std::to_string(s.alerts)) +
           td(std::to_string(s.false_alerts)) + td(std::to_string(s.false_isolations)) +
           td(format("%.1f", s.lost_iterations)) + td(format("%.2f", s.lost_gpu_hours)) +
           td(std::to_string(s.probes_sent)) + "</tr>\n";
  }
  return "<div class=\"scroll\">\n" + out + "</table>\n</div>\n";
}

std::string fault_table(const RunView& run) {
  if (run.faults.empty()) return "<p class=\"note\">No faults were injected.</p>\n";
  std::string out =
      "<table>\n<tr><th class=\"name\">id</th><th class=\"name\">type</th><th class=\"name\">target</th>"
      "<th>start (s)</th><th>end (s)</th><th class=\"name\">effect</th></tr>\n";
  for (const FaultEpisode& f : run.faults) {
    const char* effect = f.benign ? "benign (alerts on it are false)" : f.affected_job ? "slowed or stopped the job"
                                                                                        : "no effect on the job";
    out += "<tr><td class=\"name\">" + html::escape(f.id) + "</td><td class=\"name\">" + html::escape(f.type) +
           "</td><td class=\"name\">" + html::escape(f.target.empty() ? "-" : f.target) + "</td>" +
           td(format("%.1f", f.start_s)) + td(f.end_s ? format("%.1f", *f.end_s) : "end of run") +
           "<td class=\"name\">" + effect + "</td></tr>\n";
  }
  return out + "</table>\n";
}

std::string plot_or_note(const std::string& script, const PlotSize& size, const std::string& id,
                         const std::string& caption, const std::string& empty_note) {
  if (script.empty()) return "<p class=\"note\">" + html::escape(empty_note) + "</p>\n";
  return html::figure(render_svg(script, size, id + "-"), caption);
}

}  // namespace

std::string run_report_html(const RunView& run) {
  std::string body = "<h1>gauntlet run: " + html::escape(run.scenario) + "</h1>\n";
  char meta[320];
  std::snprintf(meta, sizeof meta,
                "seed %llu &middot; %.0f s simulated &middot; %llu iterations fault-free, %llu with faults "
                "(%lld lost without detection) &middot; %zu faults injected",
                static_cast<unsigned long long>(run.seed), run.sim_seconds,
                static_cast<unsigned long long>(run.iterations_fault_free),
                static_cast<unsigned long long>(run.iterations_faulty),
                static_cast<long long>(run.iterations_fault_free) - static_cast<long long>(run.iterations_faulty),
                run.faults.size());
  body += std::string("<p class=\"meta\">") + meta + "</p>\n";
  body += "<h2>Detector scoreboard</h2>\n" + scoreboard(run);
  body += "<h2>Iteration time</h2>\n" +
          plot_or_note(iteration_time_script(run), {1120, 420}, "iterations",
                       "Each line segment is a stretch of identical iterations; markers above the curve are "
                       "alerts, one row per detector.",
                       "The job completed no iteration.");
  std::string pair = plot_or_note(latency_cdf_script(run), {560, 340}, "latency",
                                  "Fraction of the faults that slowed or stopped the job detected within a latency.",
                                  "No detector detected a fault, so there is no latency to plot.");
  pair += plot_or_note(lost_iterations_script(run), {560, 340}, "lost",
                       "Iterations the run completed fewer than the fault-free run with the same seed.", "");
  body += "<h2>Detection latency and lost training</h2>\n<div class=\"grid\">\n" + pair + "</div>\n";
  body += "<h2>Injected faults</h2>\n" + fault_table(run);
  return html::page("gauntlet: " + run.scenario, body);
}

void write_run_results(const RunReport& report, const std::filesystem::path& out_dir) {
  const RunView view = view_of(report);
  write_run_outputs(report, out_dir, {{"trace.json", trace_json(report)}, {"report.html", run_report_html(view)}});
}

}  // namespace gauntlet::harness
