#include "models/telemetry/telemetry_effects.hpp"

#include <algorithm>
#include <limits>

namespace gauntlet::models {

void TelemetryEffects::Edges::add(sim::Nanos at, int owner) {
  if (!edges_.empty() && Edge{at, owner} < edges_.back()) sorted_ = false;
  edges_.push_back({at, owner});
}

const std::vector<TelemetryEffects::Edge>& TelemetryEffects::Edges::sorted() const {
  if (!sorted_) {
    std::sort(edges_.begin(), edges_.end());
    sorted_ = true;
  }
  return edges_;
}

sim::Nanos TelemetryEffects::Edges::next_after(sim::Nanos now) const {
  const std::vector<Edge>& all = sorted();
  const auto it = std::upper_bound(all.begin(), all.end(), Edge{now, std::numeric_limits<int>::max()});
  return it == all.end() ? std::numeric_limits<sim::Nanos>::max() : it->at;
}

void TelemetryEffects::add_host_window(std::map<std::pair<int, int>, std::vector<Window>>& into,
                                       std::pair<int, int> key, Window w) {
  if (w.end <= w.start) return;
  into[key].push_back(w);
  host_edges_.add(w.start, key.first);
  host_edges_.add(w.end, key.first);
}

void TelemetryEffects::add_link_window(std::map<std::pair<int, int>, std::vector<Window>>& into, sim::LinkId link,
                                       Window w) {
  if (w.end <= w.start) return;
  into[{link, 0}].push_back(w);
  link_edges_.add(w.start, link);
  link_edges_.add(w.end, link);
}

void TelemetryEffects::add_gpu_throttle(int host, int gpu, sim::Nanos start, sim::Nanos end, double slowdown,
                                        std::uint32_t reasons) {
  add_host_window(throttle_, {host, gpu}, {start, end, slowdown, reasons});
}
void TelemetryEffects::add_xid(int host, int gpu, sim::Nanos at, std::uint32_t code) {
  auto& log = xids_[{host, gpu}];
  log.insert(std::upper_bound(log.begin(), log.end(), std::pair{at, code},
                              [](const auto& a, const auto& b) { return a.first < b.first; }),
             {at, code});
  host_edges_.add(at, host);
}
void TelemetryEffects::add_gpu_error(int host, int gpu, const GpuErrorEvent& event) {
  gpu_errors_[{host, gpu}].push_back(event);
  host_edges_.add(event.at, host);
  if (event.xid != 0) add_xid(host, gpu, event.at, event.xid);
}
void TelemetryEffects::add_cpu_contention(int host, sim::Nanos start, sim::Nanos end, double slowdown) {
  add_host_window(contention_, {host, 0}, {start, end, slowdown});
}
void TelemetryEffects::add_background_load(sim::LinkId link, sim::Nanos start, sim::Nanos end, double load) {
  add_link_window(background_, link, {start, end, load});
  if (end > start && loaded_set_.insert(link).second) loaded_links_.push_back(link);
}
void TelemetryEffects::add_link_loss(sim::LinkId link, sim::Nanos start, sim::Nanos end, double rate) {
  add_link_window(loss_, link, {start, end, rate});
  if (end > start && lossy_set_.insert(link).second) lossy_links_.push_back(link);
}
void TelemetryEffects::add_agent_hang(int host, sim::Nanos start, sim::Nanos end) {
  add_host_window(hang_, {host, 0}, {start, end, 1.0});
}
void TelemetryEffects::add_gpu_silence(int host, int gpu, sim::Nanos start, sim::Nanos end) {
  add_host_window(silence_, {host, gpu}, {start, end, 1.0});
}
void TelemetryEffects::add_clock_skew(int host, sim::Nanos start, sim::Nanos end, sim::Nanos offset) {
  add_host_window(skew_, {host, 0}, {start, end, static_cast<double>(offset)});
}

const std::vector<TelemetryEffects::Window>* TelemetryEffects::find(
    const std::map<std::pair<int, int>, std::vector<Window>>& in, std::pair<int, int> key) {
  auto it = in.find(key);
  return it == in.end() ? nullptr : &it->second;
}

double TelemetryEffects::product_of_complements(const std::vector<Window>* windows, sim::Nanos at) {
  double factor = 1.0;
  if (windows)
    for (const Window& w : *windows)
      if (w.covers(at)) factor *= 1.0 - w.value;
  return factor;
}

double TelemetryEffects::clock_factor(int host, int gpu, sim::Nanos at) const {
  return product_of_complements(find(throttle_, {host, gpu}), at);
}

std::uint32_t TelemetryEffects::throttle_reasons(int host, int gpu, sim::Nanos at) const {
  std::uint32_t bits = 0;
  if (const auto* windows = find(throttle_, {host, gpu}))
    for (const Window& w : *windows)
      if (w.covers(at)) bits |= w.bits;
  return bits;
}

std::uint32_t TelemetryEffects::last_xid(int host, int gpu, sim::Nanos at) const {
  auto it = xids_.find({host, gpu});
  if (it == xids_.end()) return 0;
  std::uint32_t code = 0;
  for (const auto& [time, logged] : it->second) {
    if (time > at) break;
    code = logged;
  }
  return code;
}

GpuErrorEvent TelemetryEffects::gpu_errors(int host, int gpu, sim::Nanos after, sim::Nanos until) const {
  GpuErrorEvent out;
  out.at = until;
  const auto it = gpu_errors_.find({host, gpu});
  if (it == gpu_errors_.end()) return out;
  for (const GpuErrorEvent& e : it->second) {
    if (e.at > until) continue;
    if (e.at > after) out.add(e);
    out.row_remap_failure = out.row_remap_failure || e.row_remap_failure;
  }
  out.xid = 0;
  return out;
}

double TelemetryEffects::cpu_factor(int host, sim::Nanos at) const {
  return product_of_complements(find(contention_, {host, 0}), at);
}

double TelemetryEffects::background_load(sim::LinkId link, sim::Nanos at) const {
  return 1.0 - product_of_complements(find(background_, {link, 0}), at);
}

double TelemetryEffects::link_loss(sim::LinkId link, sim::Nanos at) const {
  return 1.0 - product_of_complements(find(loss_, {link, 0}), at);
}

bool TelemetryEffects::agent_hung(int host, sim::Nanos at) const {
  if (const auto* windows = find(hang_, {host, 0}))
    for (const Window& w : *windows)
      if (w.covers(at)) return true;
  return false;
}

bool TelemetryEffects::gpu_silent(int host, int gpu, sim::Nanos at) const {
  if (const auto* windows = find(silence_, {host, gpu}))
    for (const Window& w : *windows)
      if (w.covers(at)) return true;
  return false;
}

std::vector<TelemetryEffects::GpuWindow> TelemetryEffects::gpu_silences() const {
  std::vector<GpuWindow> out;
  for (const auto& [key, windows] : silence_)
    for (const Window& w : windows) out.push_back({key.first, key.second, w.start, w.end});
  return out;
}

sim::Nanos TelemetryEffects::clock_offset(int host, sim::Nanos at) const {
  sim::Nanos offset = 0;
  if (const auto* windows = find(skew_, {host, 0}))
    for (const Window& w : *windows)
      if (w.covers(at)) offset += static_cast<sim::Nanos>(w.value);
  return offset;
}

sim::Nanos TelemetryEffects::next_change(sim::Nanos now) const {
  return std::min(next_host_change(now), next_link_change(now));
}

sim::Nanos TelemetryEffects::next_host_change(sim::Nanos now) const { return host_edges_.next_after(now); }

sim::Nanos TelemetryEffects::next_link_change(sim::Nanos now) const { return link_edges_.next_after(now); }

std::vector<int> TelemetryEffects::hosts_changed(sim::Nanos after, sim::Nanos until) const {
  const std::vector<Edge>& all = host_edges_.sorted();
  std::vector<int> hosts;
  for (auto it = std::upper_bound(all.begin(), all.end(), Edge{after, std::numeric_limits<int>::max()});
       it != all.end() && it->at <= until; ++it)
    hosts.push_back(it->owner);
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  return hosts;
}

std::vector<sim::Nanos> TelemetryEffects::link_change_times(sim::LinkId link, sim::Nanos from, sim::Nanos to) const {
  std::vector<sim::Nanos> out;
  for (const auto* windows : {find(background_, {link, 0}), find(loss_, {link, 0})})
    if (windows)
      for (const Window& w : *windows)
        for (sim::Nanos t : {w.start, w.end})
          if (t > from && t < to) out.push_back(t);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace gauntlet::models
