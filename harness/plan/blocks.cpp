#include "harness/plan/blocks.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "harness/report/json_file.hpp"
#include "sim/input_file.hpp"

namespace gauntlet::harness {
namespace {

// Iterations of `s` that end before `t`.
double ends_before(const IterationStretch& s, double t) {
  if (s.duration_s <= 0) return s.start_s < t ? static_cast<double>(s.count) : 0;
  // Iteration i ends at start + (i + 1) x duration.
  const double x = (t - s.start_s) / s.duration_s - 1;
  if (x <= 0) return 0;
  return std::min(static_cast<double>(s.count), std::ceil(x));
}

const std::string kFaultFree = "fault-free run";
const std::string kWatchedBy = "faulty run watched by ";
const std::string kAlone = " alone (";

// The detectors a run of trace_runs() was scored for, by its process name:
// "faulty run watched by a, b" (shared) or "... by a alone (why)" (its own).
std::vector<std::string> watched_by(const std::string& name) {
  if (name.rfind(kWatchedBy, 0) != 0) return {};
  std::string list = name.substr(kWatchedBy.size());
  if (const auto alone = list.find(kAlone); alone != std::string::npos) return {list.substr(0, alone)};
  std::vector<std::string> out;
  for (std::size_t from = 0;;) {
    const auto comma = list.find(", ", from);
    out.push_back(list.substr(from, comma - from));
    if (comma == std::string::npos) return out;
    from = comma + 2;
  }
}

double number_or(const nlohmann::json& j, const char* key, double fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

// The runs' stretches from a parsed trace.json.
TraceTimelines timelines_of(const nlohmann::json& parsed) {
  TraceTimelines out;
  const auto events = parsed.is_object() ? parsed.find("traceEvents") : parsed.end();
  if (events == parsed.end() || !events->is_array()) return out;
  std::map<int, std::vector<IterationStretch>> by_pid;
  std::map<int, std::string> names;
  for (const auto& e : *events) {
    if (!e.is_object() || !e.contains("pid") || !e["pid"].is_number_integer()) continue;
    const int pid = e["pid"].get<int>();
    const std::string ph = e.value("ph", ""), cat = e.value("cat", "");
    const auto args = e.find("args");
    if (args == e.end() || !args->is_object()) continue;
    if (ph == "M" && e.value("name", "") == "process_name") {
      names[pid] = args->value("name", "");
    } else if (ph == "X" && (cat == "iteration" || cat == "steady")) {
      const double count = cat == "steady" ? number_or(*args, "count", -1) : 1;
      const double duration = number_or(*args, "duration_s", -1), ts = number_or(e, "ts", NAN);
      if (count < 0 || duration < 0 || !std::isfinite(ts)) continue;
      by_pid[pid].push_back({ts / 1e6, duration, static_cast<std::uint64_t>(count)});
    }
  }
  for (const auto& [pid, name] : names) {
    auto& stretches = by_pid[pid];
    if (name == kFaultFree) out.fault_free = stretches;
    for (const std::string& detector : watched_by(name)) out.scored[detector] = stretches;
  }
  return out;
}

}  // namespace

std::vector<double> completed_by_block(const std::vector<IterationStretch>& stretches, double run_s, int blocks) {
  std::vector<double> out(static_cast<std::size_t>(std::max(blocks, 0)), 0.0);
  for (const IterationStretch& s : stretches) {
    // Differences of a running count, the last edge open: each iteration
    // lands in exactly one block whatever the rounding.
    double before = 0;
    for (int k = 0; k < blocks; ++k) {
      const double upto = k + 1 == blocks ? static_cast<double>(s.count) : ends_before(s, run_s * (k + 1) / blocks);
      out[static_cast<std::size_t>(k)] += upto - before;
      before = upto;
    }
  }
  return out;
}

TraceTimelines read_trace_timelines(const std::filesystem::path& trace) {
  // Only the runs' names and iterations are kept as the file is parsed: a
  // month's trace is tens of MiB, most of it collectives and faults.
  using json = nlohmann::json;
  const auto keep = [](int depth, json::parse_event_t event, json& parsed) {
    if (depth != 2 || event != json::parse_event_t::object_end || !parsed.is_object()) return true;
    const std::string cat = parsed.value("cat", "");
    return cat == "iteration" || cat == "steady" || parsed.value("name", "") == "process_name";
  };
  const std::string text = sim::read_input_file(trace.string(), kMaxJsonFileBytes);
  try {
    return timelines_of(json::parse(text, keep, false));
  } catch (const json::exception&) {  // a value of another type than trace.cpp writes
    return {};
  }
}

std::map<std::string, std::vector<double>> lost_gpu_hours_by_block(
    const TraceTimelines& timelines, double run_s, double gpus, int blocks,
    const std::map<std::string, double>& lost_iterations) {
  std::map<std::string, std::vector<double>> out;
  double iterations = 0, seconds = 0;
  for (const IterationStretch& s : timelines.fault_free) {
    iterations += static_cast<double>(s.count);
    seconds += static_cast<double>(s.count) * s.duration_s;
  }
  if (iterations == 0 || blocks < 1) return out;
  // summary.json's price of an iteration: the fault-free run's mean one.
  const double gpu_hours = seconds / iterations / 3600 * gpus;
  const std::vector<double> fault_free = completed_by_block(timelines.fault_free, run_s, blocks);
  for (const auto& [detector, stretches] : timelines.scored) {
    const auto lost = lost_iterations.find(detector);
    if (lost == lost_iterations.end()) continue;
    const std::vector<double> scored = completed_by_block(stretches, run_s, blocks);
    std::vector<double> hours(scored.size());
    double sum = 0;
    for (std::size_t k = 0; k < scored.size(); ++k) {
      sum += fault_free[k] - scored[k];
      hours[k] = (fault_free[k] - scored[k]) * gpu_hours;
    }
    // Whole iterations: the counts are exact, so any gap means the trace
    // is not the runs the summary scored.
    if (sum == lost->second) out[detector] = std::move(hours);
  }
  return out;
}

}  // namespace gauntlet::harness
