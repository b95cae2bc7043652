#include "harness/report/run_report.hpp"

#include <algorithm>

#include <cstdio>

#include "harness/report/gnuplot.hpp"
#include "harness/report/html.hpp"
#include "harness/report/run_plots.hpp"
#include "harness/report/score_table.hpp"
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

// One class's cells: detected/scored, recall, latency mean/p50/p95, top-1,
// top-3, top-1 at the host or switch and at the pod.
std::string class_cells(const ClassScore& c) {
  const std::optional<LatencyStats>& l = c.detection_latency_s;
  auto latency = [&](double LatencyStats::*field) { return td(l ? format("%.1f s", (*l).*field) : "-"); };
  return td(class_counts(c)) + td(figure_text(c.recall, "%.2f")) + latency(&LatencyStats::mean) +
         latency(&LatencyStats::p50) + latency(&LatencyStats::p95) + td(figure_text(c.localization_top1, "%.2f")) +
         td(figure_text(c.localization_top3, "%.2f")) + td(figure_text(c.localization_host_top1, "%.2f")) +
         td(figure_text(c.localization_pod_top1, "%.2f"));
}

std::string scoreboard(const RunView& run) {
  const char* class_headers =
      "<th>detected</th><th>recall</th><th>latency mean</th><th>latency p50</th>"
      "<th>latency p95</th><th>top-1</th><th>top-3</th><th>host top-1</th><th>pod top-1</th>";
  std::string out = std::string("<table>\n<tr><th class=\"name\">detector</th><th>class</th>") + class_headers +
                    "<th>alerts</th><th>false alerts</th><th>precision</th><th>false isolations</th>"
                    "<th>lost iterations</th><th>lost GPU-hours</th><th>probes</th></tr>\n";
  for (const std::string& name : run.detector_order) {
    const DetectorScore& s = run.scores.at(name);
    const std::optional<RunCosts>& c = s.costs;
    out += "<tr><td class=\"name\" rowspan=\"3\">" + html::escape(name) + "</td>" + td("all") + class_cells(s.overall) +
           td(std::to_string(s.alerts)) + td(std::to_string(s.false_alerts)) + td(figure_text(s.precision, "%.2f")) +
           td(c ? std::to_string(c->false_isolations) : "-") + td(c ? format("%.1f", c->lost_iterations) : "-") +
           td(c ? format("%.2f", c->lost_gpu_hours) : "-") + td(c ? std::to_string(c->probes_sent) : "-") + "</tr>\n";
    out += "<tr>" + td("impactful") + class_cells(s.impactful) + "</tr>\n";
    out += "<tr>" + td("latent") + class_cells(s.latent) + "</tr>\n";
  }
  return "<div class=\"scroll\">\n" + out +
         "</table>\n</div>\n<p class=\"note\">detected: detected/scored faults; "
         "impactful faults slowed the job, latent ones did not; latency and top-1/top-3 (a tie on top shares the "
         "credit) over the detected faults; '-': nothing to measure.</p>\n";
}

std::size_t background_conditions(const RunView& run) {
  return run.background_not_listed +
         static_cast<std::size_t>(
             std::count_if(run.faults.begin(), run.faults.end(), [](const FaultEpisode& f) { return f.background; }));
}

// The injected faults; the healthy fleet's background conditions (a month
// of a large fleet holds hundreds of thousands) are counted, not listed.
std::string fault_table(const RunView& run) {
  const std::size_t background = background_conditions(run);
  const std::string background_note =
      background == 0 ? ""
                      : "<p class=\"note\">The healthy fleet's " + std::to_string(background) +
                            " background conditions (slow machines, corrupting links, application XIDs, ECN bursts; "
                            "benign) are listed in faults.jsonl.</p>\n";
  if (run.faults.size() + run.background_not_listed == background)
    return "<p class=\"note\">No faults were injected.</p>\n" + background_note;
  std::string out =
      "<table>\n<tr><th class=\"name\">id</th><th class=\"name\">type</th><th class=\"name\">target</th>"
      "<th>start (s)</th><th>end (s)</th><th class=\"name\">effect</th></tr>\n";
  for (const FaultEpisode& f : run.faults) {
    if (f.background) continue;
    const char* effect = f.benign         ? "benign (alerts on it are false)"
                         : f.affected_job ? "impactful: slowed or stopped the job"
                                          : "latent: no effect on the job";
    out += "<tr><td class=\"name\">" + html::escape(f.id) + "</td><td class=\"name\">" + html::escape(f.type) +
           "</td><td class=\"name\">" + html::escape(f.target.empty() ? "-" : f.target) + "</td>" +
           td(format("%.1f", f.start_s)) + td(f.end_s ? format("%.1f", *f.end_s) : "end of run") +
           "<td class=\"name\">" + effect + "</td></tr>\n";
  }
  return out + "</table>\n" + background_note;
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
                run.faults.size() + run.background_not_listed - background_conditions(run));
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

void write_run_results(const RunReport& report, const ClaimedFolder& out) {
  FileList pages;
  pages.emplace_back("trace.json", trace_json(report));
  pages.emplace_back("report.html", run_report_html(view_of(report)));
  write_run_outputs(report, out, std::move(pages));
}

}  // namespace gauntlet::harness
