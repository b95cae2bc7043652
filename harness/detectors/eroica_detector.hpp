#pragma once
// `eroica` (after EROICA): cheap global watching, expensive profiling only
// when it pays.
//
// Trigger: the job's iteration time (the longest worker's, as synchronous
// training waits for the slowest) is compared with the median of its recent
// healthy iterations; one above `slowdown` x baseline switches
// function-level profiling on for `window` on every worker (at most once per
// `cooldown`). A steady run's identical iterations trigger at most once and
// fill the baseline as that many healthy iterations.
// After a window the baseline restarts, so a lasting slowdown is profiled
// once and becomes the new normal.
//
// Diagnosis, when the window's summaries arrive: synchronous workers run the
// same functions, so the peer majority is the reference. For each function,
// each worker's time per call is compared with the median over the workers
// that ran it, as a robust z-score (0.6745 (x - median) / MAD); a worker is an
// outlier when z >= outlier_z and it is at least min_deviation slower than the
// median (a MAD of zero leaves only the second test). Each outlier is mapped to
// a device from the hardware figures measured during that function:
//  * forward / backward / optimizer: the GPU (h<N>.gpu<K>); a clock below its
//    peers' confirms throttling (score 1), a normal clock is still the GPU
//    but less certain (0.7);
//  * dataloader: the host CPU (h<N>.cpu), more certain when its CPU
//    utilization is above its peers';
//  * communication (allreduce, reduce_scatter, allgather, alltoall, send,
//    recv): the worker's RNIC host link, then the RNIC, when its NIC
//    throughput is below its peers'.
// CPU contention therefore lands on h<N>.cpu and not on the GPUs: the GPU
// kernels keep their time and clock, the dataloader stretches.
// The alert (fail_slow; network when only communication stands out) lists the
// devices most deviant first. A window with no outlier raises fail_slow with
// no suspects: the slowdown is real but not attributable to a worker.
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/detectors/detector.hpp"
#include "harness/detectors/registry.hpp"

namespace gauntlet::harness {

struct EroicaConfig {
  double slowdown = 1.1;
  std::size_t baseline_iterations = 8;
  sim::Nanos window = 60 * sim::kSecond;
  sim::Nanos cooldown = 10 * sim::kMinute;
  double outlier_z = 3.5;
  double min_deviation = 0.05;
};

// One outlying worker in one function, as found in a window's summaries.
struct EroicaOutlier {
  std::string worker;
  std::string function;
  double deviation = 0;  // (x - median) / median of time per call
  std::string device;    // the component blamed
  double confidence = 0;
};

// The peer comparison on one window's summaries; exposed for tests.
std::vector<EroicaOutlier> eroica_outliers(const std::vector<telemetry::ProfileSummary>& summaries,
                                           const EroicaConfig& config, const sim::Topology* topology);

class EroicaDetector : public Detector {
 public:
  static constexpr const char* kName = "eroica";
  EroicaDetector(EroicaConfig config, const sim::Topology* topology) : config_(config), topology_(topology) {}
  // Its name, summary, parameters and how to make one: its registry entry.
  static DetectorInfo info();
  static EroicaConfig config_from(const DetectorParams& params);

  void observe(const telemetry::Batch& batch) override;
  bool reads_heartbeats() const override { return false; }
  bool reads_samples() const override { return false; }

  std::uint64_t windows_requested() const { return windows_requested_; }
  double profiling_seconds() const { return profiling_seconds_; }

 private:
  void on_iteration_time(sim::Nanos duration, sim::Nanos now, std::uint64_t iterations = 1);
  void diagnose(sim::Nanos window_start, sim::Nanos now);

  EroicaConfig config_;
  const sim::Topology* topology_;
  std::map<std::uint64_t, sim::Nanos> pending_;  // iteration -> longest worker duration so far
  std::optional<std::uint64_t> last_fed_;
  std::deque<sim::Nanos> baseline_;
  std::optional<sim::Nanos> profiling_since_;  // the open window's start
  std::optional<sim::Nanos> last_window_;
  std::map<sim::Nanos, std::vector<telemetry::ProfileSummary>> summaries_;  // by window start
  std::uint64_t windows_requested_ = 0;
  double profiling_seconds_ = 0;
};

}  // namespace gauntlet::harness
