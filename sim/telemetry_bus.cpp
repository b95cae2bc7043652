#include "sim/telemetry_bus.hpp"

#include <utility>

namespace gauntlet::sim {

void TelemetryBus::publish(telemetry::Record record) {
  published_bytes_ += record.ByteSizeLong();
  *pending_.add_records() = std::move(record);
}

void TelemetryBus::publish_steady(telemetry::SteadyRun run) {
  published_bytes_ += run.ByteSizeLong();
  *pending_.add_steady() = std::move(run);
}

telemetry::Batch TelemetryBus::drain(Nanos until) {
  telemetry::Batch out;
  out.Swap(&pending_);
  out.set_until_ns(until);
  return out;
}

}  // namespace gauntlet::sim
