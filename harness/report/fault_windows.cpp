#include "harness/report/fault_windows.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace gauntlet::harness {

std::optional<double> median_iteration_s(const std::vector<models::IterationSpan>& timeline, double from_s,
                                         double to_s) {
  const sim::Nanos from = sim::from_seconds(from_s), to = sim::from_seconds(to_s);
  std::vector<std::pair<sim::Nanos, std::uint64_t>> counted;  // (duration, iterations)
  std::uint64_t total = 0;
  for (const models::IterationSpan& span : timeline) {
    if (span.duration <= 0 || span.count == 0) continue;
    // Iteration i of the span runs [start + i d, start + (i + 1) d).
    const sim::Nanos d = span.duration;
    const sim::Nanos first_start = std::max<sim::Nanos>(0, from - span.start);
    const auto lo = static_cast<std::uint64_t>((first_start + d - 1) / d);
    if (to - span.start < d) continue;
    const auto hi = std::min(span.count, static_cast<std::uint64_t>((to - span.start) / d));  // exclusive
    if (hi <= lo) continue;
    counted.push_back({d, hi - lo});
    total += hi - lo;
  }
  if (total == 0) return std::nullopt;
  std::sort(counted.begin(), counted.end());
  // The lower median of the iterations, each duration weighted by its count.
  const std::uint64_t middle = (total - 1) / 2;
  std::uint64_t seen = 0;
  for (const auto& [duration, count] : counted) {
    seen += count;
    if (seen > middle) return sim::to_seconds(duration);
  }
  return sim::to_seconds(counted.back().first);
}

std::vector<FaultWindowTimes> fault_window_times(const std::vector<FaultEpisode>& faults,
                                                 const std::vector<models::IterationSpan>& faulty,
                                                 const std::vector<models::IterationSpan>& fault_free,
                                                 double run_end_s) {
  auto end_of = [&](const FaultEpisode& f) { return std::min(f.end_s.value_or(run_end_s), run_end_s); };
  std::vector<FaultWindowTimes> out;
  // The healthy fleet's background runs in the fault-free run too: it is
  // neither a window of its own nor another fault's overlap.
  for (std::size_t i = 0; i < faults.size(); ++i) {
    const FaultEpisode& f = faults[i];
    if (f.background) continue;
    FaultWindowTimes w;
    w.id = f.id;
    w.type = f.type;
    w.target = f.target;
    w.start_s = f.start_s;
    w.end_s = end_of(f);
    const double length = w.end_s - w.start_s;
    // The stretches before and after, cut back to where no other fault is active.
    double before_from = std::max(0.0, w.start_s - length), after_to = std::min(run_end_s, w.end_s + length);
    for (std::size_t j = 0; j < faults.size(); ++j) {
      const FaultEpisode& g = faults[j];
      if (j == i || g.background) continue;
      const double g_end = end_of(g);
      if (g.start_s < w.start_s && g_end > w.start_s && w.before_overlaps.empty()) w.before_overlaps = g.id;
      if (g.start_s <= w.end_s && g_end > w.end_s && w.after_overlaps.empty()) w.after_overlaps = g.id;
      if (g_end <= w.start_s) before_from = std::max(before_from, g_end);
      if (g.start_s >= w.end_s) after_to = std::min(after_to, g.start_s);
    }
    if (w.start_s > 0 && w.before_overlaps.empty()) w.before_s = median_iteration_s(faulty, before_from, w.start_s);
    w.during_s = median_iteration_s(faulty, w.start_s, w.end_s);
    if (w.end_s < run_end_s && w.after_overlaps.empty()) w.after_s = median_iteration_s(faulty, w.end_s, after_to);
    w.fault_free_during_s = median_iteration_s(fault_free, w.start_s, w.end_s);
    out.push_back(std::move(w));
  }
  return out;
}

namespace {

std::string seconds(const std::optional<double>& value) {
  if (!value) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f s", *value);
  return buffer;
}

}  // namespace

std::string fault_window_table(const std::vector<FaultWindowTimes>& windows) {
  if (windows.empty()) return "";
  std::string out =
      "iteration time before / during / after each fault window (median; before and after stop at other faults):\n";
  char line[512];
  for (const FaultWindowTimes& w : windows) {
    std::string change;
    if (w.before_s && w.during_s && *w.before_s > 0) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, " (%+.1f%%)", 100.0 * (*w.during_s / *w.before_s - 1.0));
      change = buffer;
    }
    auto clean = [](const std::optional<double>& value, const std::string& overlaps) {
      return overlaps.empty() ? seconds(value) : "- (" + overlaps + " active)";
    };
    std::snprintf(line, sizeof line, "  %s %s %s %.1f-%.1f s: before %s, during %s%s, after %s; fault-free %s\n",
                  w.id.c_str(), w.type.c_str(), w.target.empty() ? "-" : w.target.c_str(), w.start_s, w.end_s,
                  clean(w.before_s, w.before_overlaps).c_str(), seconds(w.during_s).c_str(), change.c_str(),
                  clean(w.after_s, w.after_overlaps).c_str(), seconds(w.fault_free_during_s).c_str());
    out += line;
  }
  return out;
}

}  // namespace gauntlet::harness
