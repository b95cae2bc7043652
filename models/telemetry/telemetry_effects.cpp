#include "models/telemetry/telemetry_effects.hpp"

#include <algorithm>
#include <limits>

namespace gauntlet::models {

void TelemetryEffects::add(std::map<std::pair<int, int>, std::vector<Window>>& into, std::pair<int, int> key,
                           Window w) {
  if (w.end <= w.start) return;
  into[key].push_back(w);
  edges_.push_back(w.start);
  edges_.push_back(w.end);
}

void TelemetryEffects::add_gpu_throttle(int host, int gpu, sim::Nanos start, sim::Nanos end, double slowdown,
                                        std::uint32_t reasons) {
  add(throttle_, {host, gpu}, {start, end, slowdown, reasons});
}
void TelemetryEffects::add_xid(int host, int gpu, sim::Nanos at, std::uint32_t code) {
  auto& log = xids_[{host, gpu}];
  log.insert(std::upper_bound(log.begin(), log.end(), std::pair{at, code},
                              [](const auto& a, const auto& b) { return a.first < b.first; }),
             {at, code});
  edges_.push_back(at);
}
void TelemetryEffects::add_gpu_error(int host, int gpu, const GpuErrorEvent& event) {
  gpu_errors_[{host, gpu}].push_back(event);
  edges_.push_back(event.at);
  if (event.xid != 0) add_xid(host, gpu, event.at, event.xid);
}
void TelemetryEffects::add_cpu_contention(int host, sim::Nanos start, sim::Nanos end, double slowdown) {
  add(contention_, {host, 0}, {start, end, slowdown});
}
void TelemetryEffects::add_background_load(sim::LinkId link, sim::Nanos start, sim::Nanos end, double load) {
  add(background_, {link, 0}, {start, end, load});
  if (std::find(loaded_links_.begin(), loaded_links_.end(), link) == loaded_links_.end()) loaded_links_.push_back(link);
}
void TelemetryEffects::add_link_loss(sim::LinkId link, sim::Nanos start, sim::Nanos end, double rate) {
  add(loss_, {link, 0}, {start, end, rate});
  if (std::find(lossy_links_.begin(), lossy_links_.end(), link) == lossy_links_.end()) lossy_links_.push_back(link);
}
void TelemetryEffects::add_agent_hang(int host, sim::Nanos start, sim::Nanos end) {
  add(hang_, {host, 0}, {start, end, 1.0});
}
void TelemetryEffects::add_gpu_silence(int host, int gpu, sim::Nanos start, sim::Nanos end) {
  add(silence_, {host, gpu}, {start, end, 1.0});
}
void TelemetryEffects::add_clock_skew(int host, sim::Nanos start, sim::Nanos end, sim::Nanos offset) {
  add(skew_, {host, 0}, {start, end, static_cast<double>(offset)});
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

std::vector<sim::Nanos> TelemetryEffects::change_times() const {
  std::vector<sim::Nanos> out = edges_;
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

sim::Nanos TelemetryEffects::next_change(sim::Nanos now) const {
  sim::Nanos next = std::numeric_limits<sim::Nanos>::max();
  for (sim::Nanos t : edges_)
    if (t > now) next = std::min(next, t);
  return next;
}

}  // namespace gauntlet::models
