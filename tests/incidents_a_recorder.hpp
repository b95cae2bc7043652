#pragma once
// A detector for the incident tests: it raises nothing and keeps, as JSON,
// the telemetry an operator would have looked at in the seed incidents
// (GPU, CPU and RNIC samples, switch port counters, probe results, job
// events, per-worker compute times, benchmark results). It can ask for
// probes between chosen RNICs and for GEMM benchmarks at chosen times, as an
// operator checking a suspicion would.
//
// Repeated samples arrive as SteadySamples blocks; each is kept as two
// points (its first and last repeat), enough for "value at time t" queries.
#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "harness/detectors/detector.hpp"

namespace gauntlet::incidents {

struct ProbePair {
  std::string src, dst;
  bool overlay = true;
};

struct RecorderPlan {
  std::vector<ProbePair> probes;    // asked again every probe_every
  sim::Nanos probe_every = 0;       // 0: no probes
  std::vector<sim::Nanos> gemm_at;  // a GEMM benchmark of every worker at each of these times
};

class Recorder : public harness::Detector {
 public:
  Recorder(nlohmann::json* log, RecorderPlan plan) : log_(log), plan_(std::move(plan)) {}

  void observe(const telemetry::Batch& batch) override {
    for (const telemetry::Record& r : batch.records()) keep(r, -1);
    for (const telemetry::SteadySamples& block : batch.steady_samples())
      for (const telemetry::Record& r : block.samples()) {
        keep(r, block.from_ns());
        keep(r, block.until_ns());
      }
    for (const telemetry::SteadyRun& run : batch.steady())
      for (const telemetry::Record& r : run.records()) keep(r, -1);
    const sim::Nanos now = batch.until_ns();
    if (plan_.probe_every > 0 && now >= next_probe_) {
      for (const ProbePair& p : plan_.probes) request_probe({p.src, p.dst, p.overlay});
      next_probe_ = now + plan_.probe_every;
    }
    while (next_gemm_ < plan_.gemm_at.size() && now >= plan_.gemm_at[next_gemm_]) {
      request_benchmark({"gemm", {}});
      ++next_gemm_;
    }
  }

 private:
  void keep(const telemetry::Record& r, sim::Nanos at) {
    nlohmann::json& log = *log_;
    if (r.has_gpu()) {
      const auto& g = r.gpu();
      log["gpu"][g.gpu()].push_back({at >= 0 ? at : g.time_ns(), g.sm_utilization(), g.clock_mhz(), g.temperature_c()});
    } else if (r.has_nic()) {
      const auto& n = r.nic();
      log["nic"][n.nic()].push_back({at >= 0 ? at : n.time_ns(), n.tx_packets(), n.link_up()});
    } else if (r.has_cpu()) {
      log["cpu"][r.cpu().cpu()].push_back({at >= 0 ? at : r.cpu().time_ns(), r.cpu().utilization()});
    } else if (r.has_port()) {
      const auto& p = r.port();
      log["port"][p.link() + (p.upward() ? ".up" : ".down")].push_back({at >= 0 ? at : p.time_ns(), p.queue_depth()});
    } else if (r.has_probe()) {
      const auto& p = r.probe();
      log["probe"].push_back({p.sent_ns(), p.src(), p.dst(), p.overlay(), p.rtt_ns(), p.lost()});
    } else if (r.has_job()) {
      log["job"].push_back({r.job().time_ns(), static_cast<int>(r.job().kind()), r.job().error()});
    } else if (r.has_iteration()) {
      const auto& it = r.iteration();
      log["compute"][it.worker()].push_back({it.start_ns(), it.compute_ns()});
    } else if (r.has_benchmark()) {
      const auto& b = r.benchmark();
      log["benchmark"].push_back({b.time_ns(), b.kind(), b.target(), b.duration_ns()});
    }
  }

  nlohmann::json* log_;
  RecorderPlan plan_;
  sim::Nanos next_probe_ = 0;
  std::size_t next_gemm_ = 0;
};

}  // namespace gauntlet::incidents
