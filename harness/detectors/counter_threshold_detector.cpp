#include "harness/detectors/counter_threshold_detector.hpp"

namespace gauntlet::harness {

DetectorInfo CounterThresholdDetector::info() {
  using K = DetectorParamKind;
  DetectorInfo d;
  d.name = kName;
  d.summary =
      "naive baseline: a port counting more CRC errors a second than a threshold names its link; a new nonzero XID "
      "names its GPU";
  d.params = {
      {"crc_per_second", K::number, "0", "CRC errors a port may count in a second without an alert", 0.0},
      {"xid",
       K::text,
       "true",
       "alert on every new nonzero XID of a GPU",
       std::nullopt,
       std::nullopt,
       {"true", "false"}},
  };
  d.make = [](const DetectorContext& ctx) -> std::unique_ptr<Detector> {
    return std::make_unique<CounterThresholdDetector>(config_from(ctx.params));
  };
  return d;
}

CounterThresholdConfig CounterThresholdDetector::config_from(const DetectorParams& params) {
  CounterThresholdConfig c;
  c.crc_per_second = params.number("crc_per_second");
  c.xid = params.text("xid") == "true";
  return c;
}

void CounterThresholdDetector::port(const telemetry::PortCounters& p) {
  // Counts are per sample interval, one second; a link alerts when either
  // direction crosses while neither was over.
  const bool over = static_cast<double>(p.crc_errors()) > config_.crc_per_second;
  Link& link = over_[p.link()];
  const bool was = link.up || link.down;
  (p.upward() ? link.up : link.down) = over;
  if (over && !was)
    raise({sim::to_seconds(p.time_ns()), kName, "network", {{p.link(), static_cast<double>(p.crc_errors())}}});
}

void CounterThresholdDetector::gpu(const telemetry::GpuSample& g) {
  if (!config_.xid) return;
  std::uint32_t& last = xid_[g.gpu()];
  if (g.xid() != 0 && g.xid() != last)
    raise({sim::to_seconds(g.time_ns()), kName, "fail_stop", {{g.gpu(), static_cast<double>(g.xid())}}});
  last = g.xid();
}

void CounterThresholdDetector::observe(const telemetry::Batch& batch) {
  // A repeat (SteadySamples) holds a component's previous values: it
  // crosses nothing the first sample did not.
  for (const telemetry::Record& r : batch.records()) {
    if (r.has_port()) port(r.port());
    if (r.has_gpu()) gpu(r.gpu());
  }
}

}  // namespace gauntlet::harness
