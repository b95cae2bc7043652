#include "harness/report/trace.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace gauntlet::harness {
namespace {

using json = nlohmann::ordered_json;

constexpr int kIterationsTid = 1;
constexpr int kFaultsTid = 2;
constexpr int kBackgroundTid = 3;  // the healthy fleet's benign conditions, apart from the faults
constexpr int kActionsTid = 4;
constexpr int kFirstAlertTid = 5;

double micros(sim::Nanos t) { return static_cast<double>(t) / 1e3; }

// The trace's events, written out as each is made: a month's trace holds
// tens of thousands, and a document holding them all costs many times
// their text. The text is what a json array of them would dump as.
class EventStream {
 public:
  void push_back(const json& event) {
    if (!text_.empty()) text_ += ',';
    text_ += event.dump();
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

json metadata(const char* what, int pid, int tid, const std::string& name) {
  json event = {{"name", what}, {"ph", "M"}, {"pid", pid}};
  if (tid >= 0) event["tid"] = tid;
  event["args"] = {{"name", name}};
  return event;
}

json instant(const std::string& name, const char* category, int pid, int tid, double time_s, json args) {
  return {{"name", name}, {"cat", category}, {"ph", "i"},          {"s", "t"},
          {"pid", pid},   {"tid", tid},      {"ts", time_s * 1e6}, {"args", std::move(args)}};
}

void iteration_events(const std::vector<models::IterationSpan>& timeline, int pid, EventStream& events) {
  std::uint64_t in_short_spans = 0;
  for (const models::IterationSpan& span : timeline)
    if (span.count <= kPerIterationSlicesUpTo) in_short_spans += span.count;
  const bool detailed = in_short_spans <= kMaxIterationSlices;
  for (const models::IterationSpan& span : timeline) {
    if (span.count == 1 || (detailed && span.count <= kPerIterationSlicesUpTo)) {
      for (std::uint64_t i = 0; i < span.count; ++i)
        events.push_back({{"name", "iteration " + std::to_string(span.first + i)},
                          {"cat", "iteration"},
                          {"ph", "X"},
                          {"pid", pid},
                          {"tid", kIterationsTid},
                          {"ts", micros(span.start + static_cast<sim::Nanos>(i) * span.duration)},
                          {"dur", micros(span.duration)},
                          {"args", {{"duration_s", sim::to_seconds(span.duration)}}}});
      continue;
    }
    // A steady stretch is one slice: it may hold millions of iterations.
    events.push_back(
        {{"name", "iterations " + std::to_string(span.first) + ".." + std::to_string(span.first + span.count - 1)},
         {"cat", "steady"},
         {"ph", "X"},
         {"pid", pid},
         {"tid", kIterationsTid},
         {"ts", micros(span.start)},
         {"dur", micros(span.duration * static_cast<sim::Nanos>(span.count))},
         {"args", {{"duration_s", sim::to_seconds(span.duration)}, {"count", span.count}}}});
  }
}

void fault_events(const std::vector<FaultEpisode>& faults, double sim_seconds, int pid, EventStream& events) {
  std::size_t background = 0;
  for (const FaultEpisode& f : faults) {
    if (f.background && ++background > kMaxTraceBackground) continue;
    const double end_s = std::max(f.end_s.value_or(sim_seconds), f.start_s);
    events.push_back({{"name", f.type + (f.target.empty() ? "" : " " + f.target)},
                      {"cat", f.background ? "background" : "fault"},
                      {"ph", "X"},
                      {"pid", pid},
                      {"tid", f.background ? kBackgroundTid : kFaultsTid},
                      {"ts", f.start_s * 1e6},
                      {"dur", (end_s - f.start_s) * 1e6},
                      {"args", {{"id", f.id}, {"affected_job", f.affected_job}, {"benign", f.benign}}}});
  }
  if (background == 0) return;
  json track = metadata("thread_name", pid, kBackgroundTid, "background (benign)");
  if (background > kMaxTraceBackground) track["args"]["dropped_conditions"] = background - kMaxTraceBackground;
  events.push_back(std::move(track));
}

void action_events(const std::vector<MitigationAction>& actions, int pid, EventStream& events) {
  json track = metadata("thread_name", pid, kActionsTid, "mitigation actions");
  if (actions.size() > kMaxTraceAlerts) track["args"]["dropped_actions"] = actions.size() - kMaxTraceAlerts;
  events.push_back(track);
  for (std::size_t i = 0; i < actions.size() && i < kMaxTraceAlerts; ++i) {
    const MitigationAction& a = actions[i];
    std::string name = a.action;
    for (const std::string& c : a.components) name += " " + c;
    events.push_back(instant(name, "mitigation", pid, kActionsTid, a.time_s,
                             {{"action", a.action}, {"components", a.components}, {"spares_used", a.spares_used}}));
  }
}

// Returns the tid after the last alert track.
int alert_events(const TraceRun& run, int pid, EventStream& events) {
  int tid = kFirstAlertTid;
  const std::vector<Alert> none;
  for (const std::string& name : run.detectors) {
    json track = metadata("thread_name", pid, tid, "alerts: " + name);
    const auto it = run.alerts.find(name);
    const std::vector<Alert>& alerts = it != run.alerts.end() ? it->second : none;
    if (alerts.size() > kMaxTraceAlerts) track["args"]["dropped_alerts"] = alerts.size() - kMaxTraceAlerts;
    events.push_back(track);
    for (std::size_t i = 0; i < alerts.size() && i < kMaxTraceAlerts; ++i) {
      const Alert& a = alerts[i];
      json suspects = json::array();
      for (const Suspect& s : a.suspects) suspects.push_back({{"id", s.id}, {"score", s.score}});
      events.push_back(instant(a.kind + (a.suspects.empty() ? "" : " " + a.suspects.front().id), "alert", pid, tid,
                               a.time_s, {{"detector", name}, {"suspects", suspects}}));
    }
    ++tid;
  }
  return tid;
}

// One track per sampled rank, after the run's other tracks; returns what
// was sampled, for the trace's metadata.
json collective_events(const CollectiveSample& sample, int pid, int first_tid, EventStream& events) {
  json info = {{"ranks_sampled", sample.workers.size()},
               {"ranks_total", sample.ranks_total},
               {"iterations_sampled", sample.iterations_sampled},
               {"iterations_skipped", sample.iterations_skipped},
               {"slices", sample.slices.size()}};
  if (sample.workers.empty()) return info;
  info["note"] = "collectives of the sampled ranks only; each steady run is shown by its first iteration";
  std::map<std::string, int> track;
  for (const std::string& w : sample.workers) {
    const int tid = first_tid + static_cast<int>(track.size());
    track[w] = tid;
    events.push_back(metadata("thread_name", pid, tid, "collectives: " + w));
  }
  for (const CollectiveSlice& c : sample.slices) {
    const auto it = track.find(c.worker);
    if (it == track.end()) continue;
    json event = {{"name", c.op + " " + c.communicator},
                  {"cat", "collective"},
                  {"pid", pid},
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

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::vector<TraceRun> trace_runs(const RunReport& report) {
  if (!report.tenants.empty()) {  // every tenant's view of the runs, one after the other
    std::vector<TraceRun> runs;
    for (const RunReport& tenant : report.tenants)
      for (TraceRun& run : trace_runs(tenant)) {
        run.name = "job " + tenant.scenario.job.name + ": " + run.name;
        runs.push_back(std::move(run));
      }
    return runs;
  }
  const std::string& mitigation = report.scenario.mitigation;
  std::vector<TraceRun> runs;
  TraceRun shared;
  shared.timeline = report.faulty.timeline;
  shared.collectives = report.faulty.collectives;
  for (const std::string& name : report.detector_order) {
    if (report.own_runs.count(name)) continue;
    shared.detectors.push_back(name);
    auto it = report.faulty.detectors.find(name);
    shared.alerts[name] = it != report.faulty.detectors.end() ? it->second.alerts : std::vector<Alert>{};
  }
  shared.name = shared.detectors.empty() ? "faulty run, status quo (no detector)"
                                         : "faulty run watched by " + joined(shared.detectors);
  runs.push_back(std::move(shared));
  for (const std::string& name : report.detector_order) {
    const auto own = report.own_runs.find(name);
    if (own == report.own_runs.end()) continue;
    TraceRun run;
    const auto outcome = own->second.detectors.find(name);
    // Without a policy a detector runs alone because it may act on the job
    // itself; an exec: detector may, and says so only by asking.
    const bool paused = outcome != own->second.detectors.end() && outcome->second.benchmarks > 0;
    const std::string why = mitigation != "none" ? "mitigation: " + mitigation
                            : paused             ? "it pauses training"
                                                 : "it may pause training; it ran no benchmark";
    run.name = "faulty run watched by " + name + " alone (" + why + ")";
    run.timeline = own->second.timeline;
    run.detectors = {name};
    run.collectives = own->second.collectives;
    if (outcome != own->second.detectors.end()) {
      run.alerts[name] = outcome->second.alerts;
      run.actions = outcome->second.actions;
    }
    runs.push_back(std::move(run));
  }
  TraceRun fault_free;
  fault_free.name = "fault-free run";
  fault_free.timeline = report.fault_free.timeline;
  fault_free.with_faults = false;
  runs.push_back(std::move(fault_free));
  return runs;
}

std::string trace_json(const std::vector<TraceRun>& runs, const std::vector<FaultEpisode>& faults, double sim_seconds) {
  EventStream events;
  json run_info = json::array();
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const TraceRun& run = runs[r];
    const int pid = static_cast<int>(r) + 1;
    events.push_back(metadata("process_name", pid, -1, run.name));
    events.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid}, {"args", {{"sort_index", pid}}}});
    events.push_back(metadata("thread_name", pid, kIterationsTid, "iterations"));
    iteration_events(run.timeline, pid, events);
    if (run.with_faults) {
      events.push_back(metadata("thread_name", pid, kFaultsTid, "faults"));
      fault_events(faults, sim_seconds, pid, events);
    }
    if (!run.actions.empty()) action_events(run.actions, pid, events);
    const int next_tid = alert_events(run, pid, events);
    const json sample = collective_events(run.collectives, pid, next_tid, events);
    run_info.push_back({{"pid", pid}, {"name", run.name}, {"collective_sample", sample}});
  }
  json other = {{"runs", run_info}};
  if (!run_info.empty()) other["collective_sample"] = run_info[0]["collective_sample"];  // the first run's
  // {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}, as
  // a json object of the three would dump.
  return "{\"traceEvents\":[" + events.text() + "],\"displayTimeUnit\":\"ms\",\"otherData\":" + other.dump() + "}\n";
}

std::string trace_json(const RunReport& report) {
  return trace_json(trace_runs(report), report.tenants.empty() ? report.faults : report.cluster_faults,
                    sim::to_seconds(report.scenario.duration));
}

std::string trace_json(const RunView& view) {
  TraceRun run;
  run.name = "job: " + view.scenario + " seed " + std::to_string(view.seed);
  run.timeline = view.timeline;
  run.detectors = view.detector_order;
  run.alerts = view.alerts;
  run.collectives = view.collectives;
  return trace_json({run}, view.faults, view.sim_seconds);
}

}  // namespace gauntlet::harness
