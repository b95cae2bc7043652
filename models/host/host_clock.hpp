#pragma once
// Host clocks as the telemetry sees them. Every timestamp a host's components
// stamp (its workers' iteration and collective records, its GPU, CPU and RNIC
// samples, its agent's heartbeats and probes, its workers' profiles) is read
// off that host's clock, which a clock skew offsets while it lasts. Applied to
// batches on their way to the detectors: the models keep true time.
#include "models/telemetry/telemetry_effects.hpp"
#include "sim/proto/telemetry.pb.h"

namespace gauntlet::models {

// Offsets each host-stamped timestamp in `batch` by its host's clock offset
// at that (true) time. Switch counters and job events are not host-stamped.
// A steady sample block and a steady run are offset as a whole, at their
// first time: neither straddles a telemetry-effect edge.
void apply_host_clocks(const TelemetryEffects& effects, telemetry::Batch* batch);

}  // namespace gauntlet::models
