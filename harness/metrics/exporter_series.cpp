#include "harness/metrics/exporter_series.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string_view>
#include <string>

#include "harness/metrics/exporter_names.hpp"

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

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double uniform(std::uint64_t seed, std::uint64_t exporter, std::uint64_t k, std::uint64_t what) {
  return static_cast<double>(mix(mix(mix(seed ^ exporter) ^ k) ^ what) >> 11) * 0x1.0p-53;
}

// The exporter a series comes from: the value of its instance (node and
// switch exporters) or Hostname (dcgm-exporter) label.
std::uint64_t exporter_of(const std::string& metric, const std::string& labels) {
  std::string key = metric.starts_with("DCGM_") ? "dcgm:" : metric.starts_with("node_") ? "node:" : "switch:";
  for (const char* name : {"instance=\"", "Hostname=\""})
    if (const auto at = labels.find(name); at != std::string::npos) {
      const auto from = at + std::char_traits<char>::length(name);
      key += labels.substr(from, labels.find('"', from) - from);
      break;
    }
  return std::hash<std::string>{}(key);
}

// Appends one scrape's value (or its absence, a staleness marker when
// `stale`) to the run-length encoding.
void append(std::vector<SeriesSegment>& segments, std::optional<double> value, bool stale = false) {
  SeriesSegment* last = segments.empty() ? nullptr : &segments.back();
  if (!value) {
    if (last && last->missing && !stale)
      ++last->count;
    else
      segments.push_back({0, 0, 1, true, stale});
    return;
  }
  if (last && !last->missing) {
    const double expected = last->start + last->step * static_cast<double>(last->count);
    if (last->count == 1) {
      last->step = *value - last->start;
      ++last->count;
      return;
    }
    if (same_step(*value, expected)) {
      ++last->count;
      return;
    }
  }
  segments.push_back({*value, 0, 1});
}

}  // namespace

std::string render_labels(std::map<std::string, std::string> labels) {
  std::string out;
  for (const auto& [name, value] : labels) out += (out.empty() ? "" : ",") + name + "=\"" + escaped(value) + "\"";
  return out;
}

void ExporterSeries::add(const std::string& metric, const std::string& labels, const std::string& type, sim::Nanos time,
                         double value, double saturate_at) {
  auto [it, fresh] = tracks_.try_emplace(Key{metric, labels});
  Track& track = it->second;
  if (fresh) track.exporter = exporter_of(metric, labels);
  track.type = type;
  track.saturate_at = saturate_at;
  // Only changes are kept: a value holds until the next one.
  if (!track.samples.empty() && track.samples.back().value == value) return;
  track.samples.push_back({time, value, type == "counter"});
}

void ExporterSeries::record(const telemetry::Record& record, sim::Nanos time) {
  const AddSeries add = [this, time](const std::string& metric, const std::string& labels, const std::string& type,
                                     double value,
                                     double saturate_at) { this->add(metric, labels, type, time, value, saturate_at); };
  switch (record.body_case()) {
    case telemetry::Record::kGpu:
      return dcgm_series(record.gpu(), add);
    case telemetry::Record::kNic:
      return infiniband_series(record.nic(), add);
    case telemetry::Record::kPort:
      return switch_port_series(record.port(), add);
    case telemetry::Record::kTransport:
      return infiniband_series(record.transport(), add);
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
      case telemetry::Record::kTransport:
        record(r, r.transport().time_ns());
        break;
      default:
        break;
    }
  }
}

ExporterSeries::Scrape ExporterSeries::scrape_fate(std::uint64_t exporter, std::uint64_t k) const {
  const double restart_chance = settings_.restarts_per_day * sim::to_seconds(interval_) / 86400;
  if (restart_chance > 0 && uniform(settings_.seed, exporter, k, 2) < restart_chance) return Scrape::restarted;
  if (settings_.missed_scrape_rate > 0 && uniform(settings_.seed, exporter, k, 1) < settings_.missed_scrape_rate)
    return Scrape::missed;
  return Scrape::taken;
}

const std::vector<std::pair<sim::Nanos, sim::Nanos>>* ExporterSeries::unanswered_windows(const Key& key) const {
  if (settings_.unanswered_gpus.empty() || !key.metric.starts_with("DCGM_")) return nullptr;
  constexpr std::string_view kComponent = "component=\"";
  const auto at = key.labels.find(kComponent);
  if (at == std::string::npos) return nullptr;
  const auto from = at + kComponent.size();
  const auto it = settings_.unanswered_gpus.find(key.labels.substr(from, key.labels.find('"', from) - from));
  return it == settings_.unanswered_gpus.end() ? nullptr : &it->second;
}

Series ExporterSeries::series_of(const Key& key, const Track& track, sim::Nanos until) const {
  Series s;
  s.metric = key.metric;
  s.labels = key.labels;
  s.type = track.type;
  s.first_scrape = static_cast<std::uint64_t>((track.samples.front().time + interval_ - 1) / interval_);
  // dcgm-exporter answers a scrape with the values of its last collection.
  const sim::Nanos collection = key.metric.starts_with("DCGM_") ? settings_.dcgm_collection_interval : 0;
  double total = 0;  // a counter's value: every sample period's amount so far
  sim::Nanos counted_to = track.samples.front().time - kSamplePeriod;  // the last sample time summed
  std::size_t next = 0;                                                // the first change not yet in effect
  double current = 0;
  double reset_at = 0;  // the counter's value when its exporter last restarted
  const auto* unanswered = unanswered_windows(key);
  bool answered = true;  // the previous scrape found the GPU answering
  std::uint64_t k = s.first_scrape;
  for (sim::Nanos at = static_cast<sim::Nanos>(k) * interval_; at <= until; at += interval_, ++k) {
    const sim::Nanos read_at = collection > 0 ? at / collection * collection : at;
    // Changes in effect by the read; a counter sums each second's amount.
    while (next < track.samples.size() && track.samples[next].time <= read_at) {
      if (track.samples[next].cumulative && next > 0)
        total += current * static_cast<double>((track.samples[next].time - kSamplePeriod - counted_to) / kSamplePeriod);
      if (track.samples[next].cumulative) counted_to = track.samples[next].time - kSamplePeriod;
      current = track.samples[next].value;
      ++next;
    }
    double value = current;
    if (s.type == "counter") {
      const sim::Nanos seconds = std::max<sim::Nanos>(0, (read_at - counted_to) / kSamplePeriod);
      value = total + current * static_cast<double>(seconds);
    }
    if (unanswered && std::any_of(unanswered->begin(), unanswered->end(),
                                  [read_at](const auto& w) { return w.first <= read_at && read_at < w.second; })) {
      append(s.segments, std::nullopt, answered);  // gone from an answered scrape: stale at once
      answered = false;
      continue;
    }
    answered = true;
    const Scrape fate = next == 0 ? Scrape::missed : scrape_fate(track.exporter, k);
    if (fate == Scrape::restarted && s.type == "counter") reset_at = value;
    if (fate != Scrape::taken) {
      append(s.segments, std::nullopt);
      continue;
    }
    if (s.type == "counter") {
      value -= reset_at;
      if (track.saturate_at > 0) value = std::min(value, track.saturate_at);
    }
    append(s.segments, value);
  }
  // Leading gaps belong to first_scrape.
  while (!s.segments.empty() && s.segments.front().missing) {
    s.first_scrape += s.segments.front().count;
    s.segments.erase(s.segments.begin());
  }
  return s;
}

std::vector<Series> ExporterSeries::series(sim::Nanos until) const {
  std::vector<Series> out;
  for (const auto& [key, track] : tracks_) {
    if (track.samples.empty()) continue;
    Series s = series_of(key, track, until);
    if (!s.segments.empty()) out.push_back(std::move(s));
  }
  return out;
}

}  // namespace gauntlet::harness
