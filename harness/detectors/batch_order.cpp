#include "harness/detectors/batch_order.hpp"

#include <algorithm>

namespace gauntlet::harness {

sim::Nanos record_time(const telemetry::Record& r) {
  switch (r.body_case()) {
    case telemetry::Record::kIteration:
      return r.iteration().end_ns();
    case telemetry::Record::kCollective:
      return std::max(r.collective().start_ns(), r.collective().end_ns());
    case telemetry::Record::kGpu:
      return r.gpu().time_ns();
    case telemetry::Record::kNic:
      return r.nic().time_ns();
    case telemetry::Record::kPort:
      return r.port().time_ns();
    case telemetry::Record::kTransport:
      return r.transport().time_ns();
    case telemetry::Record::kHeartbeat:
      return r.heartbeat().time_ns();
    case telemetry::Record::kJob:
      return r.job().time_ns();
    case telemetry::Record::kCpu:
      return r.cpu().time_ns();
    case telemetry::Record::kProbe:
      return r.probe().sent_ns();
    case telemetry::Record::kContainer:
      return r.container().time_ns();
    case telemetry::Record::kFlow:
      return r.flow().end_ns();
    default:
      return 0;
  }
}

std::vector<BatchItem> ordered_items(const telemetry::Batch& batch, bool with_steady_samples) {
  return ordered_items(batch, nullptr, with_steady_samples);
}

std::vector<BatchItem> ordered_items(const telemetry::Batch& batch, bool (*wanted)(const telemetry::Record&),
                                     bool with_steady_samples) {
  std::vector<BatchItem> items;
  items.reserve(wanted ? static_cast<std::size_t>(batch.steady_size())
                       : static_cast<std::size_t>(batch.records_size() + batch.steady_size()));
  for (const auto& r : batch.records())
    if (!wanted || wanted(r)) items.push_back({record_time(r), &r, nullptr});
  for (const auto& s : batch.steady()) {
    sim::Nanos t = batch.until_ns();
    for (const auto& r : s.records()) t = std::min(t, record_time(r));
    items.push_back({t, nullptr, &s});
  }
  if (with_steady_samples)
    for (const auto& s : batch.steady_samples()) items.push_back({s.from_ns(), nullptr, nullptr, &s});
  std::stable_sort(items.begin(), items.end(), [](const BatchItem& a, const BatchItem& b) { return a.time < b.time; });
  return items;
}

}  // namespace gauntlet::harness
