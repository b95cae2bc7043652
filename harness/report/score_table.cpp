#include "harness/report/score_table.hpp"

#include <cstdio>

namespace gauntlet::harness {
namespace {

std::string cell(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

}  // namespace

std::string score_table(const RunReport& report) { return score_table(report.detector_order, report.scores); }

std::string score_table(const std::vector<std::string>& detector_order,
                        const std::map<std::string, DetectorScore>& scores) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-12s %9s %7s %12s %10s %6s %8s %9s\n", "detector", "precision", "recall",
                "latency_p50", "local_top1", "false", "lost_it", "lost_gpuh");
  out += line;
  for (const std::string& name : detector_order) {
    const DetectorScore& s = scores.at(name);
    const std::string latency = s.detected ? cell("%.1fs", s.detection_latency_s.p50) : "-";
    std::snprintf(line, sizeof line, "%-12s %9.2f %7.2f %12s %10.2f %6d %8.1f %9.2f\n", name.c_str(), s.precision,
                  s.recall, latency.c_str(), s.localization_top1, s.false_alerts, s.lost_iterations,
                  s.lost_gpu_hours);
    out += line;
  }
  return out;
}

}  // namespace gauntlet::harness
