#include "harness/report/score_table.hpp"

#include <algorithm>
#include <cstdio>

namespace gauntlet::harness {

std::string figure_text(const std::optional<double>& value, const char* format) {
  if (!value) return "-";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, *value);
  return buffer;
}

std::string class_counts(const ClassScore& c) {
  return std::to_string(c.detected) + "/" + std::to_string(c.scored_faults);
}

std::string score_table(const RunReport& report) {
  std::map<std::string, std::string> statuses;
  for (const auto& [name, outcome] : report.faulty.detectors) statuses[name] = outcome.status;
  return score_table(report.detector_order, report.scores, statuses);
}

std::string score_table(const std::vector<std::string>& detector_order,
                        const std::map<std::string, DetectorScore>& scores,
                        const std::map<std::string, std::string>& statuses) {
  // The name column fits the longest name (an exec: command line can be long).
  std::size_t width = 14;
  for (const std::string& name : detector_order) width = std::max(width, name.size());
  const auto name_cell = [width](const std::string& name) { return name + std::string(width - name.size() + 1, ' '); };
  std::string out = name_cell("detector");
  char line[320];
  std::snprintf(line, sizeof line, "%6s %5s %9s %6s %6s %11s %5s %5s %5s %5s %9s %7s %8s %9s\n", "alerts", "false",
                "precision", "faults", "recall", "latency_p50", "top1", "top3", "host1", "pod1", "impactful", "latent",
                "lost_it", "lost_gpuh");
  out += line;
  for (const std::string& name : detector_order) {
    const auto status = statuses.find(name);
    if (status != statuses.end() && status->second.starts_with("failed: ")) {
      // A detector that did not do its work has no figures worth reading.
      out += name + "  FAILED: " + status->second.substr(8) + "\n";
      continue;
    }
    const DetectorScore& s = scores.at(name);
    const ClassScore& all = s.overall;
    std::optional<double> p50, lost, gpuh;
    if (all.detection_latency_s) p50 = all.detection_latency_s->p50;
    if (s.costs) lost = s.costs->lost_iterations, gpuh = s.costs->lost_gpu_hours;
    out += name_cell(name);
    std::snprintf(
        line, sizeof line, "%6d %5d %9s %6s %6s %11s %5s %5s %5s %5s %9s %7s %8s %9s\n", s.alerts, s.false_alerts,
        figure_text(s.precision, "%.2f").c_str(), class_counts(all).c_str(), figure_text(all.recall, "%.2f").c_str(),
        figure_text(p50, "%.1fs").c_str(), figure_text(all.localization_top1, "%.2f").c_str(),
        figure_text(all.localization_top3, "%.2f").c_str(), figure_text(all.localization_host_top1, "%.2f").c_str(),
        figure_text(all.localization_pod_top1, "%.2f").c_str(), class_counts(s.impactful).c_str(),
        class_counts(s.latent).c_str(), figure_text(lost, "%.1f").c_str(), figure_text(gpuh, "%.2f").c_str());
    out += line;
  }
  out +=
      "faults: detected/scored (impactful slowed the job, latent did not); latency and top1/top3 over the "
      "detected; host1/pod1: top1 at the target's host or switch, and its pod; '-': nothing to measure\n";
  return out;
}

}  // namespace gauntlet::harness
