#pragma once
// Per-second statistics of every RNIC's offloaded flow table: what a vSwitch
// or RNIC operator reads without the tenant's help (FlowTableSample, one per
// table and second with traffic; see telemetry.proto).
//
// What is counted. Every network transfer the job starts (ring edges,
// pipeline send/recv, all-to-all: whatever reaches the engine) is an entry of
// its sending RNIC's table, keyed by the receiving RNIC. Its bytes move at a
// constant rate between the points where they are known: its start, every
// sample time it is still open at (the engine reports the bytes pushed so
// far) and its end. A flow set replayed instead of simulated moves its bytes
// evenly from its start to its last byte leaving the sender. So a second
// counts exactly the bytes that left in it, a collective shows as a burst in
// the seconds it runs and a compute-only second counts nothing. NVLink
// traffic never reaches an RNIC.
//
// Steady stretches. A fast-forwarded iteration starts no flows: it repeats
// the last simulated one. That iteration's flows are kept as a template
// (offsets from its start); for each SteadyRun the sampler adds one
// FlowTableRun to the batch, the template shifted to the stretch's first
// iteration and repeated every period, so a stretch costs one record whatever
// its length, and no work per second or per flow while it lasts.
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/calibration.hpp"
#include "sim/network_engine.hpp"
#include "sim/proto/telemetry.pb.h"

namespace gauntlet::models {

struct FlowTableSamplerParams {
  sim::Nanos interval = sim::kSecond;                      // the operator's sampling interval
  double mtu_bytes = calibration::kRnicMtu.default_value;  // RoCE MTU: packets per entry and interval
};

class FlowTableSampler {
 public:
  explicit FlowTableSampler(sim::NetworkEngine& engine, FlowTableSamplerParams params = {});
  FlowTableSampler(const FlowTableSampler&) = delete;
  FlowTableSampler& operator=(const FlowTableSampler&) = delete;

  // A transfer replayed without the engine: `bytes` leave src for dst evenly
  // over [from, to).
  void add_replayed(sim::EndpointId src, sim::EndpointId dst, sim::Nanos from, sim::Nanos to, double bytes);
  // Reads the job's iterations from `batch` (the latest simulated one becomes
  // the template; each SteadyRun gets its FlowTableRun) and adds the samples
  // of every whole interval ending at or before `at` (the engine's now).
  void sample(sim::Nanos at, telemetry::Batch* batch);

  std::uint64_t published_bytes() const { return published_bytes_; }

 private:
  struct Segment {
    sim::EndpointId src = 0, dst = 0;
    sim::Nanos from = 0, to = 0;
    double bytes = 0;
  };
  struct OpenTransfer {
    sim::EndpointId src = 0, dst = 0;
    sim::Nanos from = 0;  // start of the part not yet cut into a segment
    double pushed = 0;    // bytes pushed up to `from`
    double bytes = 0;
  };
  struct Reported {
    double carried = 0;       // bytes counted so far, exactly
    std::uint64_t shown = 0;  // bytes published so far (rounded once, so sums stay exact)
  };

  void on_event(const sim::TransferEvent& event);
  void add_segment(Segment segment);
  void learn_iterations(const telemetry::Batch& batch);
  void add_runs(telemetry::Batch* batch);
  void publish_until(sim::Nanos until, telemetry::Batch* batch);
  const std::string& table_name(sim::EndpointId endpoint);
  const std::string& nic_name(sim::EndpointId endpoint);

  sim::NetworkEngine& engine_;
  FlowTableSamplerParams params_;
  std::map<sim::TransferId, OpenTransfer> open_;  // ordered: cuts add segments in a fixed order
  std::vector<Segment> pending_;                  // segments with bytes in intervals not yet published
  std::deque<Segment> recent_;                    // segments since the latest simulated iteration began
  std::vector<Segment> template_;                 // the latest simulated iteration's segments, from its start
  sim::Nanos template_duration_ = -1;
  sim::Nanos last_iteration_start_ = -1;                  // of the latest simulated iteration learned
  sim::Nanos published_until_ = 0;                        // intervals ending at or before this are published
  std::unordered_map<std::uint64_t, Reported> reported_;  // per (src, dst)
  std::unordered_map<sim::EndpointId, std::pair<std::string, std::string>> names_;  // table, nic
  std::uint64_t published_bytes_ = 0;
};

}  // namespace gauntlet::models
