#include "harness/report/trace.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

namespace gauntlet::harness {
namespace {

using json = nlohmann::ordered_json;

constexpr int kJobPid = 1;
constexpr int kIterationsTid = 1;
constexpr int kFaultsTid = 2;
constexpr int kFirstAlertTid = 3;
constexpr int kCollectivesPid = 2;

double micros(sim::Nanos t) { return static_cast<double>(t) / 1e3; }

json metadata(const char* what, int pid, int tid, const std::string& name) {
  json event = {{"name", what}, {"ph", "M"}, {"pid", pid}};
  if (tid >= 0) event["tid"] = tid;
  event["args"] = {{"name", name}};
  return event;
}

// One track per sampled rank under the "collectives" process; returns what
// was sampled, for the trace's metadata.
json collective_events(const CollectiveSample& sample, json& events) {
  json info = {{"ranks_sampled", sample.workers.size()},
               {"ranks_total", sample.ranks_total},
               {"iterations_sampled", sample.iterations_sampled},
               {"iterations_skipped", sample.iterations_skipped},
               {"slices", sample.slices.size()}};
  if (sample.workers.empty()) return info;
  info["note"] = "collectives of the sampled ranks only; each steady run is shown by its first iteration";
  events.push_back(metadata("process_name", kCollectivesPid, -1,
                            "collectives (" + std::to_string(sample.workers.size()) + " of " +
                                std::to_string(sample.ranks_total) + " ranks)"));
  std::map<std::string, int> track;
  for (const std::string& w : sample.workers) {
    const int tid = static_cast<int>(track.size()) + 1;
    track[w] = tid;
    events.push_back(metadata("thread_name", kCollectivesPid, tid, w));
  }
  for (const CollectiveSlice& c : sample.slices) {
    const auto it = track.find(c.worker);
    if (it == track.end()) continue;
    json event = {{"name", c.op + " " + c.communicator},
                  {"cat", "collective"},
                  {"pid", kCollectivesPid},
                  {"tid", it->second},
                  {"ts", micros(c.start)}};
    json args = {{"iteration", c.iteration}, {"communicator", c.communicator}, {"bytes", c.bytes}};
    if (c.end == 0) {  // the rank entered it and never left
      event["name"] = "hung " + c.op + " " + c.communicator;
      event["ph"] = "i";
      event["s"] = "t";
    } else {
      event["ph"] = "X";
      event["dur"] = micros(std::max(c.end - c.start, sim::Nanos{0}));
    }
    event["args"] = args;
    events.push_back(event);
  }
  return info;
}

}  // namespace

std::string trace_json(const RunView& run) {
  json events = json::array();
  events.push_back(metadata("process_name", kJobPid, -1, "job: " + run.scenario + " seed " + std::to_string(run.seed)));
  events.push_back(metadata("thread_name", kJobPid, kIterationsTid, "iterations"));
  events.push_back(metadata("thread_name", kJobPid, kFaultsTid, "faults"));

  for (const models::IterationSpan& span : run.timeline) {
    if (span.count <= kPerIterationSlicesUpTo) {
      for (std::uint64_t i = 0; i < span.count; ++i)
        events.push_back({{"name", "iteration " + std::to_string(span.first + i)},
                          {"cat", "iteration"},
                          {"ph", "X"},
                          {"pid", kJobPid},
                          {"tid", kIterationsTid},
                          {"ts", micros(span.start + static_cast<sim::Nanos>(i) * span.duration)},
                          {"dur", micros(span.duration)},
                          {"args", {{"duration_s", sim::to_seconds(span.duration)}}}});
      continue;
    }
    // A steady stretch is one slice: it may hold millions of iterations.
    events.push_back({{"name", "iterations " + std::to_string(span.first) + ".." +
                                   std::to_string(span.first + span.count - 1)},
                      {"cat", "steady"},
                      {"ph", "X"},
                      {"pid", kJobPid},
                      {"tid", kIterationsTid},
                      {"ts", micros(span.start)},
                      {"dur", micros(span.duration * static_cast<sim::Nanos>(span.count))},
                      {"args", {{"duration_s", sim::to_seconds(span.duration)}, {"count", span.count}}}});
  }

  for (const FaultEpisode& f : run.faults) {
    const double end_s = std::max(f.end_s.value_or(run.sim_seconds), f.start_s);
    events.push_back({{"name", f.type + (f.target.empty() ? "" : " " + f.target)},
                      {"cat", "fault"},
                      {"ph", "X"},
                      {"pid", kJobPid},
                      {"tid", kFaultsTid},
                      {"ts", f.start_s * 1e6},
                      {"dur", (end_s - f.start_s) * 1e6},
                      {"args", {{"id", f.id}, {"affected_job", f.affected_job}, {"benign", f.benign}}}});
  }

  int tid = kFirstAlertTid;
  for (const std::string& name : run.detector_order) {
    json track = metadata("thread_name", kJobPid, tid, "alerts: " + name);
    const auto it = run.alerts.find(name);
    const std::vector<Alert> none;
    const std::vector<Alert>& alerts = it != run.alerts.end() ? it->second : none;
    if (alerts.size() > kMaxTraceAlerts) track["args"]["dropped_alerts"] = alerts.size() - kMaxTraceAlerts;
    events.push_back(track);
    for (std::size_t i = 0; i < alerts.size() && i < kMaxTraceAlerts; ++i) {
      const Alert& a = alerts[i];
      json suspects = json::array();
      for (const Suspect& s : a.suspects) suspects.push_back({{"id", s.id}, {"score", s.score}});
      events.push_back({{"name", a.kind + (a.suspects.empty() ? "" : " " + a.suspects.front().id)},
                        {"cat", "alert"},
                        {"ph", "i"},
                        {"s", "t"},
                        {"pid", kJobPid},
                        {"tid", tid},
                        {"ts", a.time_s * 1e6},
                        {"args", {{"detector", name}, {"suspects", suspects}}}});
    }
    ++tid;
  }
  const json sample = collective_events(run.collectives, events);
  return json{{"traceEvents", events}, {"displayTimeUnit", "ms"}, {"otherData", {{"collective_sample", sample}}}}
             .dump() +
         "\n";
}

}  // namespace gauntlet::harness
