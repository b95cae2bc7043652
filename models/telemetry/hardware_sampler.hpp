#pragma once
// Per-second hardware samples of a cluster: a GpuSample per GPU, a CpuSample
// per host and NicCounters per RNIC, taken at each sample time as the
// cluster's monitoring agents would.
//
// GPU (H100 SXM figures): SM clock 1980 MHz x the throttle's clock factor;
// SM utilization 0.9 while the job computes on it, times the share of the
// host CPU the job gets (a contended CPU feeds kernels late, so every GPU of
// the host idles in the gaps at the same moment while its clock stays put),
// times the share of the job's latest step the GPU spent computing (its
// IterationRecord's compute_ns over the step): a GPU waiting in a collective
// for a slower peer or a slow network idles, so a straggler or a congested
// step lowers the utilization of every GPU that waits;
// power from 100 W idle to 600 W busy, scaled by clock and utilization;
// temperature relaxes toward its target with a 30 s time constant: ~35 C
// idle, ~50 C busy, and up to ~70 C for a GPU throttled by 20% or more (the
// seed's hot, 20% slower GPU: thermal throttling is what a hot GPU does).
// CPU: 0.3 utilization while the job runs on the host, 1.0 (saturated) under
// contention, 0.05 idle.
// RNIC: the bytes its host link carried in the second, as the network
// engine measured them (host_link_bytes_per_second: what the leaf's port
// counts, stalls, retransmissions and other tenants' traffic included).
// Without that measure, the bytes each RNIC carried over the job's latest
// iteration (from the collectives it published, attributed to the RNIC each
// GPU uses now, after any NCCL fallback) spread evenly over that
// iteration's duration, so counters hold steady while iterations do; zero
// while the job is stopped.
// link_up is the RNIC's host link state; a downed RNIC raises no alarm.
// GPU memory and error fields (DCGM's): the memory clock; the framebuffer a
// job holds; the error counts faults leave (TelemetryEffects::gpu_errors),
// each counted in the sample whose period holds it.
//
// Compactness: a sample whose values equal the previous one of the same
// component is a repeat. The first sample after a change is published as a
// plain record; repeats are gathered into SteadySamples blocks, closed at a
// change, at every telemetry-effect edge of their host and every `hold` (aligned to
// multiples of it, so the steady components of a cluster share one block).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/calibration.hpp"
#include "models/fleet/healthy_gpus.hpp"
#include "models/telemetry/counter_calibration.hpp"
#include "models/telemetry/telemetry_effects.hpp"
#include "sim/proto/telemetry.pb.h"
#include "sim/topology.hpp"

namespace gauntlet::models {

struct HardwareSamplerParams {
  // Long enough that closing every steady component's block stays cheap over
  // month-long runs; a change is still published at once.
  sim::Nanos hold = 10 * sim::kMinute;
  // The rest are calibration attributes (models/calibration.hpp).
  double clock_mhz = calibration::kGpuClock.default_value;
  double sm_busy = calibration::kGpuSmBusy.default_value;
  double idle_power_w = calibration::kGpuIdlePower.default_value;
  double busy_power_w = calibration::kGpuBusyPower.default_value;
  double idle_temperature_c = calibration::kGpuIdleTemperature.default_value;
  double busy_temperature_c = calibration::kGpuBusyTemperature.default_value;
  double hot_temperature_c = calibration::kGpuHotTemperature.default_value;
  double hot_slowdown =
      calibration::kGpuHotSlowdown.default_value;  // throttling at which a GPU reaches hot_temperature_c
  sim::Nanos thermal_time_constant = calibration::kGpuThermalTimeConstant.default_duration();
  double cpu_idle = calibration::kCpuIdle.default_value;
  double cpu_busy = calibration::kCpuBusy.default_value;
  double cpu_contended = calibration::kCpuContended.default_value;
  double mtu_bytes = calibration::kRnicMtu.default_value;
  double memory_clock_mhz = calibration::kGpuMemoryClock.default_value;
  double framebuffer_mib = calibration::kGpuFramebuffer.default_value / 1048576;
  double framebuffer_in_use = calibration::kGpuFramebufferInUse.default_value;

  static HardwareSamplerParams from(const sim::Calibration& calibration);
};

// What the sampler reads of the job and the network at a sample time.
struct SampleInputs {
  std::function<bool(int host, int gpu)> gpu_busy;  // the job computes on it
  std::function<bool(sim::EndpointId)> link_up;
  bool traffic_flowing = true;  // the job is iterating
  // CNPs per second each RNIC handles as a sender (none when unset).
  std::function<double(sim::EndpointId)> cnp_per_second;
  // Bytes per second the RNIC's host link carries toward the leaf (upward)
  // or toward the RNIC, as the network measured them; when set, the RNIC
  // counts these bytes, the ones the leaf port it plugs into counts.
  std::function<double(sim::EndpointId, bool upward)> host_link_bytes_per_second;
  // Changes whenever anything gpu_busy or link_up read may have changed; an
  // unchanged key lets a sample with no other change repeat without being
  // recomputed.
  std::uint64_t version = 0;
};

class HardwareSampler {
 public:
  using EndpointOf = std::function<sim::EndpointId(int host, int gpu)>;

  // `healthy`: the fleet's healthy variation (outliving the sampler); null
  // samples the clean fleet.
  HardwareSampler(const sim::Topology& topology, const TelemetryEffects& effects, HardwareSamplerParams params = {},
                  const HealthyGpus* healthy = nullptr);

  // Learns each RNIC's traffic and each GPU's compute share from the latest
  // iteration whose records are in `batch`; `endpoints` gives the RNIC each
  // GPU's traffic uses now (called only when the batch holds an iteration).
  // `source` tells jobs sharing the cluster apart: each one's batches come
  // under its own number, and an RNIC carries the sum of their traffic.
  void observe_traffic(const telemetry::Batch& batch, const std::function<EndpointOf()>& endpoints,
                       std::size_t source = 0);
  // Samples every component at `at` (one period after the previous sample)
  // and appends new values as records and finished repeat blocks to `out`.
  void sample(sim::Nanos at, const SampleInputs& inputs, telemetry::Batch* out);
  // Closes every open repeat block into `out` (end of the run).
  void flush(telemetry::Batch* out);

  // Bytes this sampler added to batches (serialized), and how many samples
  // those bytes stand for.
  std::uint64_t published_bytes() const { return published_bytes_; }
  std::uint64_t represented_samples() const { return represented_samples_; }

  // Bytes per second each RNIC sends and receives in the current iteration.
  double tx_rate(sim::EndpointId endpoint) const;
  double rx_rate(sim::EndpointId endpoint) const;

 private:
  struct Component {
    telemetry::Record last;  // the last value published or repeated
    bool has_last = false;
    sim::Nanos repeat_from = -1, repeat_until = -1;  // open repeat block
  };
  telemetry::Record gpu_sample(int host, int gpu, sim::Nanos at, const SampleInputs& inputs);
  void set_gpu_health(int host, int gpu, bool busy, sim::Nanos at, telemetry::GpuSample* sample);
  // observe_traffic's parts: the latest iteration in a batch, the share of
  // it each GPU computed, and the bytes each RNIC moved in it.
  struct LatestIteration;
  static LatestIteration latest_iteration(const telemetry::Batch& batch);
  void learn_compute_shares(const LatestIteration& latest);
  void count_wire_bytes(const LatestIteration& latest, const EndpointOf& endpoint_of, std::vector<double>* tx,
                        std::vector<double>* rx) const;
  telemetry::Record cpu_sample(int host, sim::Nanos at, const SampleInputs& inputs) const;
  telemetry::Record nic_sample(sim::EndpointId endpoint, sim::Nanos at, const SampleInputs& inputs) const;
  void offer(std::size_t index, telemetry::Record sample, sim::Nanos at, telemetry::Batch* out);
  void offer_gpu(std::size_t index, int host, int gpu, sim::Nanos at, const SampleInputs& inputs,
                 telemetry::Batch* out);
  // Ends the component's open repeat block. Its value is read when the block
  // is emitted, unless `keep_value` copies it now (the component's value may
  // change before then).
  void close(std::size_t index, bool keep_value = false);
  void silence(std::size_t index);
  void close_all();
  void close_host(int host);
  std::vector<std::size_t> components_of(int host) const;
  void repeat_all(sim::Nanos at);
  void resample_hosts(const std::vector<int>& hosts, sim::Nanos at, const SampleInputs& inputs, telemetry::Batch* out);
  void emit_closed(telemetry::Batch* out);
  // Quiet seconds extend every component's repeat block; the span is kept
  // here and folded into the components only when one of them is read, so a
  // quiet second costs nothing per component.
  void fold_quiet_span();
  // The cluster-wide index of a GPU named by a worker id, or -1.
  int gpu_of(const std::string& name) const;

  const sim::Topology& topology_;
  const TelemetryEffects& effects_;
  HardwareSamplerParams params_;
  std::unique_ptr<HealthyGpus> clean_;  // the clean fleet, when no variation was given
  const HealthyGpus* healthy_;
  bool quiet(sim::Nanos at, const SampleInputs& inputs) const;

  sim::Nanos previous_ = -1;
  sim::Nanos quiet_from_ = -1, quiet_until_ = -1;
  std::uint64_t last_version_ = 0;
  bool last_flowing_ = false;
  bool traffic_changed_ = true;
  // What one job's records last gave, per RNIC.
  struct TrafficSource {
    std::uint64_t version = 0;  // records_version of the steady run the rates were read from
    sim::Nanos period = 0;
    std::vector<double> tx, rx;
  };
  std::vector<TrafficSource> sources_;
  bool settling_ = true;  // some GPU's temperature still moves
  sim::Nanos period_ = sim::kSecond;
  std::vector<double> temperature_;  // per GPU of the cluster
  std::vector<double> tx_rate_, rx_rate_;
  std::vector<double> compute_share_;               // per GPU of the cluster; 1 until the job's first step
  std::vector<Component> components_;               // GPUs, then CPUs, then RNICs
  std::vector<std::string> names_;                  // their ids, in the same order
  std::unordered_map<std::string, int> gpu_index_;  // a GPU's id -> its index
  // A repeat block closed since the last emit: its component, first repeat
  // and, when the component has moved on since, the value it repeated.
  struct ClosedRepeat {
    std::size_t component = 0;
    sim::Nanos from = 0;
    std::unique_ptr<telemetry::Record> value;
  };
  // Blocks are built only when emitted, straight into the outgoing batch.
  std::map<std::pair<sim::Nanos, sim::Nanos>, std::vector<ClosedRepeat>> closed_;
  std::uint64_t published_bytes_ = 0;
  std::uint64_t represented_samples_ = 0;
};

}  // namespace gauntlet::models
