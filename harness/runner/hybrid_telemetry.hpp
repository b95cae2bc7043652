#pragma once
// Telemetry of a run on the hybrid engine, in the one schema both other
// engines publish: the flow engine's counter model (fabric_sampler) for
// every port and RNIC, with what the packet batches counted in the same
// second taking the model's place for the counters packets show (CRC
// errors, drops, PFC frames, ECN marks; resends, NAKs, CNPs, timeouts).
// A port or RNIC no batch touched keeps the model's record.
#include "sim/proto/telemetry.pb.h"

namespace gauntlet::harness {

// Folds `packets` (a PacketTelemetry sample of the hybrid engine's batches)
// into `out` (the flow model's records of the same instant).
void merge_packet_counts(const telemetry::Batch& packets, telemetry::Batch* out);

}  // namespace gauntlet::harness
