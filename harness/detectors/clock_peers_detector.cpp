#include "harness/detectors/clock_peers_detector.hpp"

#include <algorithm>

namespace gauntlet::harness {

DetectorInfo ClockPeersDetector::info() {
  using K = DetectorParamKind;
  DetectorInfo d;
  d.name = kName;
  d.summary = "naive baseline: a busy GPU clocked more than a margin below its busy peers' median names itself";
  d.params = {
      {"margin", K::number, "0.05", "fraction below the busy peers' median clock that makes a GPU a suspect", 0.0, 1.0},
  };
  d.make = [](const DetectorContext& ctx) -> std::unique_ptr<Detector> {
    return std::make_unique<ClockPeersDetector>(config_from(ctx.params));
  };
  return d;
}

ClockPeersConfig ClockPeersDetector::config_from(const DetectorParams& params) {
  ClockPeersConfig c;
  c.margin = params.number("margin");
  return c;
}

void ClockPeersDetector::observe(const telemetry::Batch& batch) {
  // Repeats (SteadySamples) hold each GPU's previous values: only a new
  // sample can move a GPU or the peers' median.
  bool changed = false;
  for (const telemetry::Record& r : batch.records()) {
    if (!r.has_gpu()) continue;
    const telemetry::GpuSample& s = r.gpu();
    auto [it, fresh] = index_.try_emplace(s.gpu(), gpus_.size());
    if (fresh) {
      names_.push_back(s.gpu());
      gpus_.emplace_back();
    }
    Gpu& g = gpus_[it->second];
    g.clock_mhz = s.clock_mhz();
    g.busy = s.sm_utilization() > 0;
    changed = true;
  }
  if (changed) check(sim::to_seconds(batch.until_ns()));
}

void ClockPeersDetector::check(double now_s) {
  std::vector<double> busy;
  for (const Gpu& g : gpus_)
    if (g.busy) busy.push_back(g.clock_mhz);
  if (busy.size() < 2) return;
  const auto middle = busy.begin() + static_cast<std::ptrdiff_t>(busy.size() / 2);
  std::nth_element(busy.begin(), middle, busy.end());
  const double floor = *middle * (1.0 - config_.margin);
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    Gpu& g = gpus_[i];
    const bool low = g.busy && g.clock_mhz < floor;
    if (low && !g.low) raise({now_s, kName, "fail_slow", {{names_[i], 1.0 - g.clock_mhz / *middle}}});
    if (g.busy) g.low = low;  // an idle GPU keeps its state until it computes again
  }
}

}  // namespace gauntlet::harness
