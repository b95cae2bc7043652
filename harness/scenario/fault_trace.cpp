#include "harness/scenario/fault_trace.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <unordered_map>

#include "harness/scenario/input_error.hpp"
#include "harness/scenario/input_file.hpp"
#include "harness/scenario/yaml_document.hpp"
#include "harness/scenario/yaml_read.hpp"

namespace gauntlet::harness {
namespace {

using namespace yaml_read;
using sim::Nanos;

// Servers numbered in order of their first fault, so a host mapping by
// index does not depend on how the trace spells its server names.
class ServerIndex {
 public:
  std::size_t of(const std::string& name) {
    auto [it, added] = index_.try_emplace(name, names_.size());
    if (added) names_.push_back(name);
    return it->second;
  }
  std::vector<std::string> take() { return std::move(names_); }

 private:
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<std::string> names_;
};

void sort_by_onset(FaultTrace& trace) {
  std::stable_sort(trace.faults.begin(), trace.faults.end(),
                   [](const TraceFault& a, const TraceFault& b) { return a.start < b.start; });
}

struct Event {
  std::string node;
  std::string category;
  Nanos time = 0;
  bool start = false;
  YAML::Mark mark;
};

Event read_event(const Source& source, const Field& item) {
  const MapView map(source, item);
  map.allow_only({"node_id", "event_time", "event_type", "fault_type"});
  Event event;
  event.mark = item.value_mark;
  event.node = read_text(source, map.require("node_id"));
  if (event.node.empty()) source.fail(map.field("node_id").value_mark, "'node_id' is empty");
  const Field time = map.require("event_time");
  const double days = read_number(source, time);
  if (!std::isfinite(days) || days < 0 ||
      days * static_cast<double>(sim::kDay) > static_cast<double>(sim::kMaxDuration))
    source.fail(time.value_mark, "'event_time' must be a number of days from 0 to 10000");
  // To the millisecond: a time written to 10^-4 days lands on a whole one.
  event.time = std::llround(days * static_cast<double>(sim::kDay / sim::kMillisecond)) * sim::kMillisecond;
  const Field type = map.require("event_type");
  const std::string kind = read_text(source, type);
  if (kind != "fault_start" && kind != "fault_end")
    source.fail(type.value_mark, "'event_type' must be fault_start or fault_end, got '" + kind + "'");
  event.start = kind == "fault_start";
  const MapView fault_type(source, map.require("fault_type"));
  fault_type.allow_only({"Level", "Class", "Desc"});
  for (std::string_view key : {"Level", "Class", "Desc"}) {
    const std::string part = read_text(source, fault_type.require(key));
    if (part.empty() || part.find('/') != std::string::npos)
      source.fail(fault_type.field(key).value_mark,
                  "'fault_type." + std::string(key) + "' must be non-empty text without '/'");
    event.category += (event.category.empty() ? "" : "/") + part;
  }
  return event;
}

FaultTrace parse_infinitehbd(const std::string& text, const std::string& file_name) {
  const Source source(file_name);
  const YAML::Node root = load_one_document(source, text, "an infinitehbd trace");
  if (!root.IsSequence())
    source.fail(root.Mark(),
                "an infinitehbd trace is a JSON list of fault_start and fault_end events; got " + describe(root));
  std::vector<Event> events;
  for (const Field& item : read_sequence(source, Field{"event", root, root.Mark(), root.Mark()}))
    events.push_back(read_event(source, item));
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.time < b.time; });

  FaultTrace trace;
  trace.file = file_name;
  ServerIndex servers;
  // Open faults per (node, category), earliest first.
  std::map<std::pair<std::string, std::string>, std::deque<std::size_t>> open;
  for (const Event& event : events) {
    trace.span = std::max(trace.span, event.time);
    auto& pending = open[{event.node, event.category}];
    if (event.start) {
      TraceFault fault;
      fault.server = servers.of(event.node);
      fault.category = event.category;
      fault.start = event.time;
      fault.pos = to_pos(event.mark);
      pending.push_back(trace.faults.size());
      trace.faults.push_back(std::move(fault));
      continue;
    }
    if (pending.empty())
      source.fail(event.mark, "fault_end of node " + event.node + " (" + event.category +
                                  ") closes no open fault_start of that node and fault_type before it");
    TraceFault& fault = trace.faults[pending.front()];
    pending.pop_front();
    fault.repair = event.time - fault.start;
  }
  trace.servers = servers.take();
  sort_by_onset(trace);
  return trace;
}

std::string_view trim_cr(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

Nanos read_csv_time(const std::string& file_name, int line, std::size_t column, std::string_view text,
                    std::string_view what) {
  std::string error;
  const auto value = sim::parse_duration(text, &error);
  if (!value)
    throw InputError(file_name, line, static_cast<int>(column) + 1,
                     std::string(what) + ": " + error + " (a duration from the trace's origin, e.g. 3.9d)");
  return *value;
}

FaultTrace parse_csv(const std::string& text, const std::string& file_name) {
  constexpr std::string_view kHeader = "server,start,end,category";
  FaultTrace trace;
  trace.file = file_name;
  ServerIndex servers;
  bool header_seen = false;
  int line_number = 0;
  std::size_t line_start = 0;
  while (line_start < text.size()) {
    std::size_t line_end = text.find('\n', line_start);
    if (line_end == std::string::npos) line_end = text.size();
    const std::string_view line = trim_cr(std::string_view(text).substr(line_start, line_end - line_start));
    line_start = line_end + 1;
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    if (!header_seen) {
      if (line != kHeader)
        throw InputError(file_name, line_number, 1, "the first line must be the header '" + std::string(kHeader) + "'");
      header_seen = true;
      continue;
    }
    // server, start and end hold no commas; the category is the rest of the line.
    std::size_t columns[4] = {0, 0, 0, 0};
    for (int k = 1; k < 4; ++k) {
      const std::size_t comma = line.find(',', columns[k - 1]);
      if (comma == std::string_view::npos)
        throw InputError(file_name, line_number, static_cast<int>(line.size()) + 1,
                         "expected 4 fields (server,start,end,category), found " + std::to_string(k));
      columns[k] = comma + 1;
    }
    auto field = [&](int k) {
      const std::size_t end = k < 3 ? columns[k + 1] - 1 : line.size();
      return line.substr(columns[k], end - columns[k]);
    };
    if (field(0).empty()) throw InputError(file_name, line_number, 1, "the server is empty");
    if (field(3).empty())
      throw InputError(file_name, line_number, static_cast<int>(columns[3]) + 1, "the category is empty");
    TraceFault fault;
    fault.server = servers.of(std::string(field(0)));
    fault.category = std::string(field(3));
    fault.start = read_csv_time(file_name, line_number, columns[1], field(1), "start");
    fault.pos = {line_number, 1};
    trace.span = std::max(trace.span, fault.start);
    if (!field(2).empty()) {
      const Nanos end = read_csv_time(file_name, line_number, columns[2], field(2), "end");
      if (end < fault.start)
        throw InputError(file_name, line_number, static_cast<int>(columns[2]) + 1,
                         "end " + std::string(field(2)) + " is before start " + std::string(field(1)));
      fault.repair = end - fault.start;
      trace.span = std::max(trace.span, end);
    }
    trace.faults.push_back(std::move(fault));
  }
  if (!header_seen)
    throw InputError(file_name, 1, 1,
                     "the trace is empty; its first line must be the header '" + std::string(kHeader) + "'");
  trace.servers = servers.take();
  sort_by_onset(trace);
  return trace;
}

}  // namespace

std::optional<TraceFormat> trace_format_named(std::string_view name) {
  if (name == "infinitehbd") return TraceFormat::infinitehbd;
  if (name == "csv") return TraceFormat::csv;
  return std::nullopt;
}

FaultTrace parse_fault_trace(const std::string& text, const std::string& file_name, TraceFormat format) {
  return format == TraceFormat::infinitehbd ? parse_infinitehbd(text, file_name) : parse_csv(text, file_name);
}

FaultTrace load_fault_trace(const std::string& path, TraceFormat format) {
  return parse_fault_trace(read_input_file(path, kMaxTraceFileBytes), path, format);
}

}  // namespace gauntlet::harness
