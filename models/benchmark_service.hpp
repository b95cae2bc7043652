#pragma once
// Validation benchmarks that pause training (Falcon's third step). Each
// result comes from running the benchmark on the simulated hardware: the
// service acts on the job through models::JobControl and never reads the
// cluster's fault state.
//
// A request holds the job at its next iteration boundary; once it has
// stopped, the queued benchmarks run one after another and training resumes
// when the last is done. The pause is the requester's cost: the job makes
// no progress while it lasts.
//  * gemm: every target GPU runs the same fixed matrix multiplications at
//    once (a kernel of gemm_time on a nominal GPU, run by a KernelRunner);
//    a GPU that cannot run it reports nothing. Only the GPU's own clock
//    matters: CPU contention on the host slows data loading and kernel
//    launch in training, not a GEMM loop already on the device.
//  * allreduce: every target data-parallel communicator runs one ring
//    allreduce of allreduce_bytes at once, over the RNICs the job uses and
//    the real paths, so loss, congestion or a slow flow table on a ring's
//    paths slows that ring. A ring not done after `timeout` (a link down) is
//    reported at the timeout and the job resumes.
// Each result is published as a BenchmarkResult when its benchmark ends,
// with a small seeded jitter (0.5%) as real measurements have.
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/job_control.hpp"
#include "sim/network_engine.hpp"
#include "sim/rng.hpp"
#include "sim/telemetry_bus.hpp"

namespace gauntlet::models {

struct BenchmarkSettings {
  sim::Nanos gemm_time = 200 * sim::kMillisecond;  // the GEMM loop on a nominal GPU
  double allreduce_bytes = 1024.0 * 1024 * 1024;   // per rank
  sim::Nanos timeout = 60 * sim::kSecond;
  double jitter = 0.005;
};

struct BenchmarkOrder {
  std::string detector;              // who asked (results and cost go to it)
  std::string kind;                  // gemm | allreduce
  std::vector<std::string> targets;  // workers (gemm) or communicators (allreduce); empty: all of the job's
};

// What one detector's benchmarks cost.
struct BenchmarkCost {
  int benchmarks = 0;
  double pause_seconds = 0;     // training stopped for them
  double pause_iterations = 0;  // the same in iterations at the pace the job had when it stopped
};

// Runs a kernel of `nominal` duration (on a nominal GPU) on a GPU: how long
// it took there, or nothing when the GPU could not run it.
using KernelRunner = std::function<std::optional<sim::Nanos>(int host, int gpu, sim::Nanos nominal)>;

class BenchmarkService {
 public:
  BenchmarkService(sim::NetworkEngine& engine, JobControl& job, sim::TelemetryBus& bus, KernelRunner gpus,
                   std::uint64_t seed, BenchmarkSettings settings = {});

  // Queues a benchmark; unknown kinds are rejected with std::invalid_argument.
  void submit(BenchmarkOrder order);
  BenchmarkCost cost(const std::string& detector) const;
  bool pausing() const { return active_; }

 private:
  struct Result {
    std::string target;
    sim::Nanos duration = 0;
  };
  void on_held();
  void run_next();
  void run_gemm(const BenchmarkOrder& order);
  void run_allreduce(const BenchmarkOrder& order);
  void finish(const BenchmarkOrder& order, sim::Nanos started, const std::vector<Result>& results);
  sim::Nanos jittered(sim::Nanos value);

  sim::NetworkEngine& engine_;
  JobControl& job_;
  sim::TelemetryBus& bus_;
  KernelRunner gpus_;
  sim::Rng rng_;
  BenchmarkSettings settings_;
  std::deque<BenchmarkOrder> queue_;
  bool active_ = false;
  sim::Nanos pace_ = 0;           // the job's iteration time when it stopped
  std::uint64_t generation_ = 0;  // the running benchmark; a late ring of a timed-out one is ignored
  std::map<std::string, BenchmarkCost> costs_;
};

}  // namespace gauntlet::models
