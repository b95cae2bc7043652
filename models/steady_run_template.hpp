#pragma once
// The steady runs of one job, published without copying their records.
// Every stretch that repeats one simulated iteration carries that
// iteration's records shifted in time: tens of thousands of records (five
// strings each) at 4,096 GPUs, and a stretch ends at every checkpoint. The
// template keeps one SteadyRun per simulated iteration, rewrites only its
// times and sequence numbers for each stretch and lends it to the bus; a
// stretch that ends while the template is still in the pending batch is
// copied instead.
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/proto/telemetry.pb.h"
#include "sim/telemetry_bus.hpp"
#include "sim/time.hpp"

namespace gauntlet::models {

struct SteadyStretch {
  std::uint64_t first_iteration = 0;
  std::uint64_t count = 0;
  sim::Nanos period = 0;
  sim::Nanos shift = 0;  // from the repeated records' own times to the stretch's first iteration
  // The repeated iteration's times are stretched by `scale` about `origin`
  // (its start), before the shift: a record at t is published at
  // origin + shift + (t - origin) * scale, its compute time scaled alike.
  sim::Nanos origin = 0;
  double scale = 1.0;
};

class SteadyRunTemplate {
 public:
  // Publishes `stretch` on `bus` as a SteadyRun repeating `records` (all of
  // them iteration or collective records, else they are copied), which stay
  // the same for as long as `records_version` does.
  void publish(sim::TelemetryBus& bus, const std::vector<const telemetry::Record*>& records,
               std::uint64_t records_version, const SteadyStretch& stretch);

 private:
  void rebuild(const std::vector<const telemetry::Record*>& records, std::uint64_t records_version);
  std::uint64_t encoded_iteration_bytes() const;
  void measure(std::uint64_t header_bytes, bool only_scale_moved);

  std::unique_ptr<telemetry::SteadyRun> run_ = std::make_unique<telemetry::SteadyRun>();
  std::uint64_t version_ = 0;  // the records_version run_'s records were copied at; 0: none yet
  bool lendable_ = false;      // only times and sequence numbers differ between stretches
  std::uint64_t lent_in_ = 0;  // the bus generation run_ was last lent in, plus one
  // The encoded size of run_'s records, valid while every rewritten field
  // encodes in as many bytes as when it was measured; its iteration
  // records' share apart, since a new time scale changes only their
  // compute times' widths.
  std::uint64_t records_bytes_ = 0, iteration_bytes_ = 0;
  int time_width_ = 0, sequence_width_ = 0;  // those encoded widths; 0: not measured
  double measured_scale_ = 1.0;              // the time scale they were measured at
  std::vector<int> iteration_records_;       // run_'s iteration records, by index
};

}  // namespace gauntlet::models
