#include "harness/metrics/exporter_series.hpp"

#include <algorithm>
#include <cmath>

#include "sim/component_id.hpp"

namespace gauntlet::harness {
namespace {

// Hardware samples come once per second; a counter record is the amount of
// the second ending at its time.
constexpr sim::Nanos kSamplePeriod = sim::kSecond;

std::string escaped(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

bool same_step(double a, double b) { return a == b || std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); }

}  // namespace

std::string render_labels(std::map<std::string, std::string> labels) {
  std::string out;
  for (const auto& [name, value] : labels) out += (out.empty() ? "" : ",") + name + "=\"" + escaped(value) + "\"";
  return out;
}

void ExporterSeries::add(const std::string& metric, const std::string& labels, const std::string& type, sim::Nanos time,
                         double value) {
  Track& track = tracks_[Key{metric, labels}];
  track.type = type;
  // Only changes are kept: a value holds until the next one.
  if (!track.samples.empty() && track.samples.back().value == value) return;
  track.samples.push_back({time, value, type == "counter"});
}

void ExporterSeries::record(const telemetry::Record& record, sim::Nanos time) {
  switch (record.body_case()) {
    case telemetry::Record::kGpu: {
      const telemetry::GpuSample& g = record.gpu();
      const auto id = sim::ComponentId::parse(g.gpu());
      if (!id) return;
      const std::string labels = render_labels({{"gpu", std::to_string(id->index)},
                                                {"device", "nvidia" + std::to_string(id->index)},
                                                {"Hostname", "h" + std::to_string(id->host)},
                                                {"component", g.gpu()}});
      add("DCGM_FI_DEV_SM_CLOCK", labels, "gauge", time, g.clock_mhz());
      add("DCGM_FI_DEV_GPU_TEMP", labels, "gauge", time, g.temperature_c());
      add("DCGM_FI_DEV_POWER_USAGE", labels, "gauge", time, g.power_w());
      add("DCGM_FI_DEV_GPU_UTIL", labels, "gauge", time, std::round(100 * g.sm_utilization()));
      return;
    }
    case telemetry::Record::kNic: {
      const telemetry::NicCounters& n = record.nic();
      const auto id = sim::ComponentId::parse(n.nic());
      if (!id) return;
      const std::string labels = render_labels({{"device", "mlx5_" + std::to_string(id->index)},
                                                {"port", "1"},
                                                {"instance", "h" + std::to_string(id->host)},
                                                {"component", n.nic()}});
      add("node_infiniband_port_data_transmitted_bytes_total", labels, "counter", time,
          static_cast<double>(n.tx_bytes()));
      add("node_infiniband_port_data_received_bytes_total", labels, "counter", time, static_cast<double>(n.rx_bytes()));
      add("node_infiniband_port_packets_transmitted_total", labels, "counter", time,
          static_cast<double>(n.tx_packets()));
      add("node_infiniband_port_packets_received_total", labels, "counter", time, static_cast<double>(n.rx_packets()));
      add("node_infiniband_rp_cnp_handled_total", labels, "counter", time, static_cast<double>(n.cnp()));
      add("node_infiniband_state_id", labels, "gauge", time, n.link_up() ? 4 : 1);
      return;
    }
    case telemetry::Record::kPort: {
      const telemetry::PortCounters& p = record.port();
      const auto id = sim::ComponentId::parse(p.link());
      if (!id) return;
      // The switch that counts the port: a fabric link's downward direction
      // leaves its spine; everything else is counted at the leaf.
      const bool at_spine = id->kind == sim::ComponentKind::fabric_link && !p.upward();
      const std::string counted_at = at_spine ? "spine" + std::to_string(id->spine) : "leaf" + std::to_string(id->leaf);
      const std::string labels = render_labels({{"instance", counted_at},
                                                {"ifName", p.link()},
                                                {"direction", p.upward() ? "up" : "down"},
                                                {"component", p.link()}});
      add("ifHCOutOctets", labels, "counter", time, static_cast<double>(p.tx_bytes()));
      add("ifHCOutUcastPkts", labels, "counter", time, static_cast<double>(p.tx_packets()));
      add("switch_port_ecn_marked_packets_total", labels, "counter", time, static_cast<double>(p.ecn_marked()));
      add("switch_port_queue_depth_bytes", labels, "gauge", time, p.queue_depth());
      add("ifOperStatus", labels, "gauge", time, p.link_up() ? 1 : 2);
      return;
    }
    default:
      return;
  }
}

void ExporterSeries::observe(const telemetry::Batch& batch) {
  // A SteadySamples block repeats values already recorded; only changes
  // matter here, and each change is a plain record.
  for (const telemetry::Record& r : batch.records()) {
    switch (r.body_case()) {
      case telemetry::Record::kGpu:
        record(r, r.gpu().time_ns());
        break;
      case telemetry::Record::kNic:
        record(r, r.nic().time_ns());
        break;
      case telemetry::Record::kPort:
        record(r, r.port().time_ns());
        break;
      default:
        break;
    }
  }
}

std::vector<Series> ExporterSeries::series(sim::Nanos until) const {
  std::vector<Series> out;
  for (const auto& [key, track] : tracks_) {
    if (track.samples.empty()) continue;
    Series s;
    s.metric = key.metric;
    s.labels = key.labels;
    s.type = track.type;
    s.first_scrape = static_cast<std::uint64_t>((track.samples.front().time + interval_ - 1) / interval_);
    double total = 0;  // a counter's value: every sample period's amount so far
    sim::Nanos counted_to = track.samples.front().time - kSamplePeriod;  // the last sample time summed
    std::size_t next = 0;                                                // the first change not yet in effect
    double current = 0;
    for (sim::Nanos at = static_cast<sim::Nanos>(s.first_scrape) * interval_; at <= until; at += interval_) {
      // Changes in effect by this scrape; a counter sums each second's amount.
      while (next < track.samples.size() && track.samples[next].time <= at) {
        if (track.samples[next].cumulative && next > 0)
          total +=
              current * static_cast<double>((track.samples[next].time - kSamplePeriod - counted_to) / kSamplePeriod);
        if (track.samples[next].cumulative) counted_to = track.samples[next].time - kSamplePeriod;
        current = track.samples[next].value;
        ++next;
      }
      double value = current;
      if (s.type == "counter") {
        const sim::Nanos seconds = (at - counted_to) / kSamplePeriod;  // sample times in (counted_to, at]
        value = total + current * static_cast<double>(seconds);
      }
      if (!s.segments.empty()) {
        SeriesSegment& last = s.segments.back();
        const double expected = last.start + last.step * static_cast<double>(last.count);
        if (last.count == 1) {
          last.step = value - last.start;
          ++last.count;
          continue;
        }
        if (same_step(value, expected)) {
          ++last.count;
          continue;
        }
      }
      s.segments.push_back({value, 0, 1});
    }
    if (!s.segments.empty()) out.push_back(std::move(s));
  }
  return out;
}

}  // namespace gauntlet::harness
