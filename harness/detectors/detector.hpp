#pragma once
// A detector sees telemetry batches in simulated-time order and raises alerts.
// It never sees model internals: the same detector scores a simulated run and
// a real canary run.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/detectors/alert.hpp"
#include "sim/proto/telemetry.pb.h"
#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness {

// A detector's parameters after validation against its registry entry:
// every declared parameter is present (given or defaulted) and well-formed.
class DetectorParams {
 public:
  DetectorParams() = default;
  explicit DetectorParams(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  sim::Nanos duration(const std::string& name) const;
  double number(const std::string& name) const;
  long long integer(const std::string& name) const;
  const std::string& text(const std::string& name) const;

 private:
  std::map<std::string, std::string> values_;
};

// What a detector may ask the system under test for. Results come back as
// telemetry (ProbeResult, ProfileSummary, BenchmarkResult) in later batches.
struct ProbeRequest {
  std::string src;  // RNIC endpoint, h<N>.nic<K>
  std::string dst;
  bool overlay = false;  // through the container overlay (vSwitch, flow table), else the bare underlay
  // UDP source port the pings leave from: ECMP hashes it to a spine. 0: the
  // src-dst connection's own, the path the pair's traffic takes.
  std::uint16_t source_port = 0;
};

struct ProfilingRequest {
  sim::Nanos duration = 0;           // how long function-level profiling stays on
  std::vector<std::string> workers;  // empty: every worker
};

// A benchmark that pauses training while it runs (Falcon's validation step).
struct BenchmarkRequest {
  std::string kind;                  // gemm | allreduce
  std::vector<std::string> targets;  // workers (gemm) or communicators (allreduce); empty: all
};

struct DetectorContext {
  const sim::Topology* topology = nullptr;  // the operator's view of the cluster
  DetectorParams params;
  // The name the run files its probe and benchmark results under (a
  // scenario's `as:` name); empty: the registered name.
  std::string name;
};

class Detector {
 public:
  virtual ~Detector() = default;
  // Every record published up to batch.until_ns(), in time order.
  virtual void observe(const telemetry::Batch& batch) = 0;
  // Whether the detector reads the monitoring agents' heartbeats. A run whose
  // detectors all ignore them does not produce them: over a month of 520
  // hosts they are over a hundred million records nobody would read.
  virtual bool reads_heartbeats() const { return true; }
  // Whether the detector reads the RNICs' flow table statistics
  // (FlowTableSample, FlowTableRun). Off unless asked for: nothing is
  // measured for a run nobody reads them in.
  virtual bool reads_flow_tables() const { return false; }
  // Whether the detector reads IPFIX-style flow records (FlowRecord). Off
  // unless asked for: no connection is metered for a run nobody reads them in.
  virtual bool reads_flow_records() const { return false; }
  // Whether the detector reads the per-second hardware and fabric samples
  // (GpuSample, CpuSample, NicCounters, RnicTransportCounters, PortCounters
  // and their SteadySamples). A run none of whose readers do takes none: a
  // month of them is most of what such a run would cost.
  virtual bool reads_samples() const { return true; }
  // "ok", or "failed: <reason>" for a detector that could not do its work
  // (a program that crashed, a rule engine that refused the rules).
  virtual std::string status() const { return "ok"; }
  // What the detector raised or asked for since the previous call.
  std::vector<Alert> take_alerts() { return std::exchange(alerts_, {}); }
  std::vector<ProbeRequest> take_probe_requests() { return std::exchange(probes_, {}); }
  std::vector<ProfilingRequest> take_profiling_requests() { return std::exchange(profiling_, {}); }
  std::vector<BenchmarkRequest> take_benchmark_requests() { return std::exchange(benchmarks_, {}); }

 protected:
  void raise(Alert alert) { alerts_.push_back(std::move(alert)); }
  void request_probe(ProbeRequest request) { probes_.push_back(std::move(request)); }
  void request_profiling(ProfilingRequest request) { profiling_.push_back(std::move(request)); }
  void request_benchmark(BenchmarkRequest request) { benchmarks_.push_back(std::move(request)); }

 private:
  std::vector<Alert> alerts_;
  std::vector<ProbeRequest> probes_;
  std::vector<ProfilingRequest> profiling_;
  std::vector<BenchmarkRequest> benchmarks_;
};

}  // namespace gauntlet::harness
