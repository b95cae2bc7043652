#pragma once
// Models publish telemetry here; whoever runs the simulation drains it into
// batches for detectors. Models never know who listens, so measuring code
// never edits a model.
#include <cstdint>
#include <vector>

#include "sim/proto/telemetry.pb.h"
#include "sim/time.hpp"

namespace gauntlet::sim {

class TelemetryBus {
 public:
  void publish(telemetry::Record record);
  void publish_steady(telemetry::SteadyRun run);
  // Moves out everything published so far as one batch ending at until.
  telemetry::Batch drain(Nanos until);
  std::uint64_t published_bytes() const { return published_bytes_; }

 private:
  telemetry::Batch pending_;
  std::uint64_t published_bytes_ = 0;
};

}  // namespace gauntlet::sim
