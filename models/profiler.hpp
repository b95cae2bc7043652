#pragma once
// Function-level profiling on demand (the instrument EROICA switches on).
// While a window is open, every profiled worker's training functions are
// summarized from the job's actual phase timings (the iteration and
// collective records the job publishes) and the hardware's state, and one
// ProfileSummary per (worker, function) is published when the window closes.
//
// Functions and where their time comes from:
//  * forward / backward / optimizer: the GPU kernels of a worker's compute.
//    Nominal shares of compute are 30% / 60% / 5%; a GPU running at speed g
//    (throttled) stretches them by 1/g and its clock reads g x nominal.
//  * dataloader: the host side of compute (data loading, kernel launch),
//    nominally 5%, stretched by 1/c where c is the share of the host CPU the
//    job gets. The job's compute is nominal / (c g); the nominal step is
//    recovered from it, and what the job's composition adds beyond the two
//    stretches goes to the slowed side(s) in proportion, so the functions
//    add up to the compute really spent. Under contention the host CPU is
//    saturated (a processor-shared CPU slows its tenants only when demand
//    exceeds it), so CPU utilization reads 1.0, else 0.3; the GPU clock
//    stays nominal.
//  * each collective op (allreduce, reduce_scatter, allgather, alltoall,
//    send, recv): the rank's record, end - start; NIC throughput is the bytes
//    the rank put on the wire (a ring edge carries 2(n-1)/n of the buffer)
//    over that time, zero when its next hop is on the same host (NVLink).
//    PCIe carries the same bytes (GPUDirect RDMA).
// Every figure gets a small seeded jitter (0.5%) so peers are not identical,
// as real measurements never are.
//
// Cost: profiling is not free. While a window is open each iteration runs
// `overhead` (default 2%, the low end of what lightweight function tracing
// costs) slower. Every detector observes the same simulated run, so that
// slowdown is not applied to the shared job: it is counted and charged to the
// detector that asked (window seconds and overhead seconds).
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "models/calibration.hpp"
#include "sim/proto/telemetry.pb.h"
#include "sim/rng.hpp"
#include "sim/telemetry_bus.hpp"
#include "sim/time.hpp"

namespace gauntlet::models {

// What the profiler reads of the hardware while a window is open.
struct HardwareState {
  // A GPU's clock relative to nominal (1; below under throttling).
  std::function<double(int host, int gpu)> gpu_clock;
  // The share of its host CPU the job gets (1 uncontended).
  std::function<double(int host)> cpu_share;
};

// Overhead, clock, utilizations and jitter are calibration attributes
// (models/calibration.hpp).
struct ProfilerSettings {
  double overhead = calibration::kProfilerOverhead.default_value;
  double gpu_clock_mhz = calibration::kGpuClock.default_value;                 // nominal SM clock
  double forward_share = 0.30, backward_share = 0.60, optimizer_share = 0.05;  // the rest is dataloader
  double cpu_busy = calibration::kCpuBusy.default_value;   // host CPU utilization of an uncontended job
  double sm_busy = calibration::kGpuSmBusy.default_value;  // SM utilization inside forward/backward kernels
  double jitter = calibration::kProfilerJitter.default_value;
  sim::Nanos max_lag = 5 * sim::kMinute;  // give up waiting for a window's last iterations (a hung job)

  static ProfilerSettings from(const sim::Calibration& calibration);
};

struct ProfilingCost {
  double window_seconds = 0;    // profiling switched on
  double overhead_seconds = 0;  // training time lost to its slowdown
};

class Profiler {
 public:
  Profiler(sim::TelemetryBus& bus, HardwareState hardware, std::uint64_t seed, ProfilerSettings settings = {});

  // Switches profiling on for [now, now + duration) on `workers` (empty: all);
  // returns what the window costs.
  ProfilingCost start(sim::Nanos now, sim::Nanos duration, const std::vector<std::string>& workers);
  // The records the job published up to batch.until_ns(): iterations and
  // collectives that started inside an open window are summarized. Then
  // windows that are over publish their summaries on the bus.
  void observe(const telemetry::Batch& batch);

  std::size_t open_windows() const { return windows_.size(); }
  // The earliest end of an open window after `now` (else the far future):
  // the job must not fast-forward across it, or the window's iterations
  // would only be published when the steady stretch ends.
  sim::Nanos next_window_end(sim::Nanos now) const;
  const ProfilerSettings& settings() const { return settings_; }

 private:
  struct Figures {  // time-weighted sums
    double ns = 0;
    std::uint64_t calls = 0;
    double clock = 0, sm = 0, nic = 0, cpu = 0, pcie = 0;  // each x ns
  };
  struct Window {
    sim::Nanos start = 0, end = 0;
    std::vector<std::string> workers;                                  // sorted; empty: all
    bool job_passed_end = false;                                       // an iteration starting after `end` was seen
    std::map<std::pair<std::string, std::string>, Figures> functions;  // worker, function
  };

  bool profiles(const Window& w, const std::string& worker) const;
  double gpu_clock(int host, int gpu) const;
  double cpu_share(int host) const;
  void add(Window& w, const std::string& worker, const std::string& function, double ns, std::uint64_t calls,
           double clock, double sm, double nic, double cpu, double pcie);
  void add_iteration(Window& w, const telemetry::IterationRecord& r, std::uint64_t count);
  void add_collective(Window& w, const telemetry::CollectiveRecord& c, int ring_size, std::uint64_t count);
  void add_records(const google::protobuf::RepeatedPtrField<telemetry::Record>& records, sim::Nanos period,
                   std::uint64_t count);
  void publish(const Window& w);
  double jittered(double value);

  sim::TelemetryBus& bus_;
  HardwareState hardware_;
  sim::Rng rng_;
  ProfilerSettings settings_;
  std::vector<Window> windows_;
};

}  // namespace gauntlet::models
