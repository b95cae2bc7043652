#include "harness/scenario/fault_conflicts.hpp"

#include <iterator>

#include "sim/component_id.hpp"

namespace gauntlet::harness::detail {
namespace {

std::string describe_fault(const injectors::FaultSpec& fault) {
  return fault.type + " on " + fault.target + " at " + sim::format_duration(fault.start);
}

}  // namespace

bool FaultConflicts::is_open_fail_stop(const injectors::FaultSpec& fault) const {
  return !fault.duration && types_.spec(fault.type).fail_stop;
}

int owning_host(const std::string& component) {
  const auto id = sim::ComponentId::parse(component);
  if (!id) return -1;
  switch (id->kind) {
    case sim::ComponentKind::host:
    case sim::ComponentKind::gpu:
    case sim::ComponentKind::nic:
    case sim::ComponentKind::flow_table:
    case sim::ComponentKind::cpu:
    case sim::ComponentKind::agent:
    case sim::ComponentKind::host_link:
      return id->host;
    case sim::ComponentKind::leaf:
    case sim::ComponentKind::spine:
    case sim::ComponentKind::fabric_link:
      return -1;
  }
  return -1;
}

std::optional<std::string> FaultConflicts::check(const injectors::FaultSpec& fault) const {
  // A reconfigure is a job-level event with no target; it cannot collide.
  if (fault.target.empty()) return std::nullopt;
  const sim::Nanos end = fault.end() ? *fault.end() : run_end_;

  if (auto it = windows_.find({fault.type, fault.target}); it != windows_.end()) {
    auto before_end = it->second.lower_bound(end);
    if (before_end != it->second.begin()) {
      const Window& w = std::prev(before_end)->second;
      if (fault.start < w.end)
        return describe_fault(fault) + " overlaps another " + fault.type + " on the same target from " +
               sim::format_duration(w.start) +
               (w.end == run_end_ ? " to the end of the run" : " to " + sim::format_duration(w.end)) + " (line " +
               std::to_string(w.origin_line) + ")";
    }
  }

  const int host = owning_host(fault.target);
  if (host < 0) return std::nullopt;
  const auto state = hosts_.find(host);
  if (state == hosts_.end()) return std::nullopt;
  const HostState& h = state->second;
  if (h.open_fail_stop && h.open_fail_stop->start < fault.start)
    return describe_fault(fault) + " comes after the open-ended " + h.fail_stop_type + " on h" + std::to_string(host) +
           " at " + sim::format_duration(h.open_fail_stop->start) + " (line " +
           std::to_string(h.open_fail_stop->origin_line) + "), which takes the host out of service";
  if (is_open_fail_stop(fault) && h.latest_start > fault.start)
    return describe_fault(fault) + " is open-ended and fail-stop, but h" + std::to_string(host) +
           " has a fault starting later, at " + sim::format_duration(h.latest_start);
  return std::nullopt;
}

void FaultConflicts::add(const injectors::FaultSpec& fault, int origin_line) {
  if (fault.target.empty()) return;
  const Window window{fault.start, fault.end() ? *fault.end() : run_end_, origin_line};
  // An empty window overlaps nothing, and would share its start with the
  // window after it.
  if (window.start < window.end) windows_[{fault.type, fault.target}].emplace(window.start, window);
  const int host = owning_host(fault.target);
  if (host < 0) return;
  HostState& h = hosts_[host];
  if (fault.start > h.latest_start) h.latest_start = fault.start;
  if (is_open_fail_stop(fault) && (!h.open_fail_stop || fault.start < h.open_fail_stop->start)) {
    h.open_fail_stop = window;
    h.fail_stop_type = fault.type;
  }
}

}  // namespace gauntlet::harness::detail
