#pragma once
// Telemetry of a run on the hybrid engine, in the one schema both other
// engines publish: the flow engine's counter model (fabric_sampler) for
// every port and RNIC, with what the packet batches counted in the same
// second taking the model's place for the counters packets show (CRC
// errors, drops, PFC frames, ECN marks; resends, NAKs, CNPs, timeouts).
// A port or RNIC no batch touched keeps the model's record. Bytes and
// packets are always the model's: it counts every transfer's data, at
// either level, and the RNICs' byte counters come from it too, while a
// batch also counts its acknowledgement and CNP frames.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "sim/proto/telemetry.pb.h"

namespace gauntlet::harness {

class PacketCountMerge {
 public:
  // Folds `packets` (a PacketTelemetry sample of the hybrid engine's
  // batches) into `out` (the flow model's records of the same instant).
  void merge(const telemetry::Batch& packets, telemetry::Batch* out);

 private:
  using PortIndex = std::map<std::pair<std::string, std::int64_t>, telemetry::PortCounters*>;
  using RnicIndex = std::map<std::pair<std::string, std::int64_t>, telemetry::RnicTransportCounters*>;
  void merge_port(const telemetry::PortCounters& counted, const PortIndex& model, telemetry::Batch* out);
  void merge_rnic(const telemetry::RnicTransportCounters& counted, const RnicIndex& model, telemetry::Batch* out);

  // The model publishes a port's record when it changes: a port a batch
  // crossed without one this second shows the model's last record (held
  // by the exporters until the next) with the batch's counts over it.
  std::map<std::string, telemetry::PortCounters> model_ports_;  // link+direction -> the model's last record
  std::set<std::string> overlaid_;  // ports whose last record shown carries a batch's counts over a held one
  // The same for RNICs' transport counters, which the model also publishes
  // only when they change.
  std::map<std::string, telemetry::RnicTransportCounters> model_rnics_;  // nic -> the model's last record
  std::set<std::string> overlaid_rnics_;
};

}  // namespace gauntlet::harness
