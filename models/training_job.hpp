#pragma once
// A synchronous data-parallel training job: every iteration each rank
// computes, then each data-parallel ring allreduces its gradients, and the
// next iteration starts when the slowest ring is done.
//
// Steady-state fast-forward: an iteration's timing depends only on the
// network state and the GPUs' speeds. When both are unchanged since the last
// simulated iteration and no scheduled change falls inside, the job skips
// ahead over as many identical iterations as fit and publishes them as one
// SteadyRun, giving the same timings as simulating each one.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "models/job_spec.hpp"
#include "models/placement.hpp"
#include "sim/network_engine.hpp"
#include "sim/telemetry_bus.hpp"

namespace gauntlet::models {

// Consecutive iterations with the same duration.
struct IterationSpan {
  std::uint64_t first = 0;  // 0-based iteration index
  std::uint64_t count = 0;
  sim::Nanos start = 0;
  sim::Nanos duration = 0;
};

class TrainingJob {
 public:
  using ChangeHorizon = std::function<sim::Nanos()>;  // time of the next scheduled change

  TrainingJob(const JobSpec& job, const sim::Topology& topology, sim::NetworkEngine& engine, sim::TelemetryBus& bus);

  // Starts iterating at `at`; iterations that would end after `horizon` are
  // not counted.
  void start(sim::Nanos at, sim::Nanos horizon);
  void set_fast_forward(bool enabled) { fast_forward_ = enabled; }
  void set_change_horizon(ChangeHorizon next_change) { next_change_ = std::move(next_change); }

  // A GPU's compute speed relative to nominal (1.0); takes effect from the
  // next iteration.
  void set_gpu_speed(int host, int gpu, double speed);
  double gpu_speed(int host, int gpu) const;

  const Placement& placement() const { return placement_; }
  const std::vector<IterationSpan>& timeline() const { return timeline_; }
  std::uint64_t completed_iterations() const;
  std::uint64_t simulated_iterations() const { return simulated_iterations_; }

 private:
  struct Outcome {
    std::uint64_t key_network = 0;
    std::uint64_t key_compute = 0;
    sim::Nanos start = 0;
    sim::Nanos duration = 0;
    std::vector<telemetry::Record> records;  // of the iteration that started at `start`
  };

  void begin_iteration();
  bool try_fast_forward();
  void simulate_iteration();
  void finish_iteration(Outcome outcome);
  void record_span(sim::Nanos start, sim::Nanos duration, std::uint64_t count);

  JobSpec job_;
  Placement placement_;
  sim::NetworkEngine& engine_;
  sim::TelemetryBus& bus_;
  std::vector<double> speed_;  // per rank
  std::uint64_t compute_version_ = 0;
  bool fast_forward_ = true;
  ChangeHorizon next_change_;
  sim::Nanos horizon_ = 0;
  std::uint64_t next_iteration_ = 0;
  std::uint64_t simulated_iterations_ = 0;
  std::optional<Outcome> last_;
  std::vector<IterationSpan> timeline_;
};

}  // namespace gauntlet::models
