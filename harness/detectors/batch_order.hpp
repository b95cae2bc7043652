#pragma once
// A batch carries single records (in time order) and steady runs apart from
// them. Detectors that care about order walk both merged by time.
#include <vector>

#include "sim/proto/telemetry.pb.h"
#include "sim/time.hpp"

namespace gauntlet::harness {

// When a record happened: the end of an iteration, the later of a
// collective's start and end (end is 0 while it hangs), a sample's time.
sim::Nanos record_time(const telemetry::Record& record);

struct BatchItem {
  sim::Nanos time = 0;
  const telemetry::Record* record = nullptr;          // exactly one of these is set
  const telemetry::SteadyRun* steady = nullptr;       // placed at its first record's time
  const telemetry::SteadySamples* samples = nullptr;  // placed at its from_ns
};

// Records and steady runs of a batch in time order; ties keep records first
// in their published order.
// Steady sample blocks are included only when asked for, so walkers that
// know records and steady runs alone never meet a third kind.
std::vector<BatchItem> ordered_items(const telemetry::Batch& batch, bool with_steady_samples = false);
// The same with only the single records `wanted` says a walker reads (a
// batch may carry a quarter of a million probe results it would skip); the
// records kept stay in the same order among themselves.
std::vector<BatchItem> ordered_items(const telemetry::Batch& batch, bool (*wanted)(const telemetry::Record&),
                                     bool with_steady_samples = false);

}  // namespace gauntlet::harness
