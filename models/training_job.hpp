#pragma once
// A synchronous training job and its lifecycle.
//
// An iteration runs its phases as concurrent flows (models/iteration_run.hpp):
// the expert-parallel all-to-all, the 1F1B pipeline and the data-parallel
// ring allreduce. The next iteration starts when the slowest rank is done.
// Every checkpoint_interval the job stops for checkpoint_cost to write a
// checkpoint. A crash (collective watchdog, transport failure) or an
// isolation rolls back to the last checkpoint and resumes restart_cost after
// the hardware is available again: on spare hosts when the job has spares
// left, otherwise on the same hosts once they are repaired.
//
// The job is reached by three kinds of callers, each through its own part:
//   - injectors change the cluster's hardware through the fault hooks below,
//     which update the ClusterState (models/cluster_state.hpp) and react;
//   - policies and services act through the levers and read only what an
//     operator could see (models/job_control.hpp);
//   - the runner starts it and reads its progress (models/progress_ledger.hpp).
//
// Steady-state fast-forward: an iteration's timing depends only on the
// network state, the GPUs' speeds and the placement. When all are unchanged
// since the last simulated iteration and no scheduled change, checkpoint or
// horizon falls inside, the job skips ahead over as many identical
// iterations as fit and publishes them as one SteadyRun, giving the same
// timings as simulating each one. Stretches double in length from the last
// simulated iteration, so a new state shows in telemetry about as soon as
// it has lasted as long again.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "models/cluster_state.hpp"
#include "models/collectives/flows.hpp"
#include "models/container.hpp"
#include "models/host_pool.hpp"
#include "models/iteration_run.hpp"
#include "models/job_rebalance.hpp"
#include "models/job_spec.hpp"
#include "models/job_status.hpp"
#include "models/placement.hpp"
#include "models/progress_ledger.hpp"
#include "models/steady_run_template.hpp"
#include "sim/network_engine.hpp"
#include "sim/telemetry_bus.hpp"

namespace gauntlet::models {

// What silent data corruption did to one step's numerics, as the training
// framework logs it (IterationRecord's nonfinite_gradients and loss_spike).
struct StepCorruption {
  bool nonfinite_gradients = false;
  double loss_spike = 0;  // the step's loss over the recent mean; 0: none
};

class TrainingJob {
 public:
  using ChangeHorizon = std::function<sim::Nanos()>;  // time of the next scheduled change

  TrainingJob(const JobSpec& job, const sim::Topology& topology, sim::NetworkEngine& engine, sim::TelemetryBus& bus);

  // Starts iterating at `at`; iterations that would end after `horizon` are
  // not counted.
  void start(sim::Nanos at, sim::Nanos horizon);
  void set_fast_forward(bool enabled) { fast_forward_ = enabled; }
  // Data-parallel allreduces step by step instead of as concurrent edge
  // flows: the reference the collective scheme is benchmarked against.
  void set_stepwise_rings(bool enabled) { stepwise_rings_ = enabled; }
  // Flow sets replayed from an earlier identical set instead of simulated.
  const FlowOutcomeCache& flow_outcomes() const { return flow_outcomes_; }
  void set_change_horizon(ChangeHorizon next_change) { next_change_ = std::move(next_change); }
  // Which of an iteration's records its steady runs repeat: all of them
  // unless set. Copying them is most of a long run's cost, so a run whose
  // readers use only some (a reference run) keeps only those.
  using RecordFilter = std::function<bool(const telemetry::Record&)>;
  void set_steady_record_filter(RecordFilter keep) { steady_filter_ = std::move(keep); }
  // Flow set outcomes other runs of this fabric simulated (see FlowSetArchive); null: none.
  void set_flow_set_archive(const FlowSetArchive* archive) { flow_set_archive_ = archive; }

  const JobSpec& spec() const { return job_; }
  const Placement& placement() const { return *placement_; }
  const sim::Topology& topology() const { return topology_; }
  // The hardware as faults left it; for simulating it, never for deciding.
  const ClusterState& cluster() const { return cluster_; }
  // The RNIC a rank's traffic uses now: its affine RNIC, or NCCL's fallback.
  sim::EndpointId rank_endpoint(int rank) const;
  JobState state() const { return state_; }
  // The containers the workers ran in, from the job's start on.
  const ContainerSet& containers() const { return containers_; }

  // Progress: iterations that count (each index once), and their timeline.
  const std::vector<IterationSpan>& timeline() const { return ledger_.timeline(); }
  std::uint64_t completed_iterations() const { return ledger_.progress(); }
  std::uint64_t progress_iterations() const { return ledger_.progress(); }
  // Every iteration that ran to completion, redone ones included.
  std::uint64_t executed_iterations() const { return ledger_.executed(); }
  // Iterations that completed but were rolled back by a restart, and the
  // time they had taken.
  std::uint64_t lost_iterations() const { return ledger_.executed() - ledger_.progress(); }
  sim::Nanos lost_iteration_time() const { return ledger_.lost_time(); }
  std::uint64_t simulated_iterations() const { return simulated_iterations_; }
  int restarts() const { return restarts_; }
  // When the job waited for hosts it could not get, up to `now`.
  PlacementShortfall shortfall(sim::Nanos now) const;
  int checkpoints() const { return checkpoints_; }

  // --- Fault hooks (the fault scheduler calls these) ---
  // A GPU's compute speed relative to nominal (1.0); takes effect from the
  // next iteration.
  void set_gpu_speed(int host, int gpu, double speed) { cluster_.set_gpu_speed(host, gpu, speed); }
  // Silent data corruption on a GPU: the next step the job finishes on it
  // shows `corruption` in every worker's iteration record; the step's time
  // is unchanged.
  void corrupt_step(int host, int gpu, const StepCorruption& corruption);
  // --- The healthy fleet's variation (models/fleet/), set by the run ---
  void set_healthy_speeds(std::vector<double> speeds) { cluster_.set_healthy_speeds(std::move(speeds)); }
  // Simulated iterations compute at the pace; a stretch repeating one
  // simulated at another pace scales its time by their ratio (see
  // try_fast_forward), so a new pace ends the stretch in progress at its
  // next iteration boundary rather than costing a simulated iteration.
  void set_fleet_pace(double pace);
  // Fail-stop: the GPU or host stops; the job hangs in its next collective
  // until the watchdog fires after collective_timeout (or a mitigation acts).
  void fail_gpu(int host, int gpu);
  // A GPU fails with an error its processes see (an uncorrectable ECC
  // error): the job crashes at once with `error` instead of hanging.
  void fail_gpu(int host, int gpu, const std::string& error);
  // The processes on a GPU crash with `error` and the GPU stays usable (a
  // contained error): the job restarts on the same hardware.
  void crash_on_gpu(int host, int gpu, const std::string& error);
  void fail_host(int host);
  void repair_gpu(int host, int gpu);
  void repair_host(int host);
  // The RNIC's link is down: NCCL moves its GPUs' traffic to `fallback_nic`
  // of the same host without any error. The step in flight is retried on the
  // fallback. Traffic moves back only when the job's communicators are
  // re-created, i.e. at the next restart after clear_nic_fallback.
  void set_nic_fallback(int host, int nic, int fallback_nic);
  void clear_nic_fallback(int host, int nic) { cluster_.clear_nic_fallback(host, nic); }
  // A collective failed outright (transport retries exhausted): the job
  // crashes at once with the user-visible error.
  void fail_collective(const std::string& error);
  // Whether any of the job's current traffic crosses this link.
  bool uses_link(sim::LinkId link) const;
  // A benign re-placement: at the next iteration boundary, checkpoint and
  // restart onto the job's hosts shifted by one within its pool (its hosts
  // and spares).
  void reconfigure();

  // --- Mitigation ---
  // Takes hosts out of service (a GPU, RNIC or flow-table id stands for its
  // host): the job stops now, rolls back to its last checkpoint and restarts
  // after restart_cost with a spare in place of each isolated host it used.
  // An isolated host stays out unless its fault is repaired. Returns the
  // number of spares this isolation took.
  int isolate(const std::vector<std::string>& components);
  int spares_left() const { return hosts_.spares_left(); }
  int spares_used() const { return hosts_.spares_used(); }
  const std::set<int>& isolated_hosts() const { return hosts_.isolated(); }

  // --- Requests from detectors ---
  // Ends a steady stretch in flight at the first iteration boundary at or
  // after now and publishes it there instead of at its planned end; the job
  // then goes on (and may fast-forward again up to the next change). Timings
  // are unchanged: only where the stretch is split.
  void cut_steady_run();
  // Stops the job at its next iteration boundary (after a checkpoint being
  // written, or once a restart resumes it) and calls `on_held` once there;
  // the job stays stopped until release(). Its progress stops meanwhile.
  void hold(std::function<void()> on_held);
  void release();
  bool held() const { return parked_; }

  // --- Work-split levers (job_rebalance.hpp/.cpp) ---
  // Re-splits micro-batches over DP replicas and layers over pipeline
  // stages: the step in flight is abandoned and training resumes `pause`
  // later (re-sharding the data loader, moving layer weights) with the new
  // split. Off the running state it takes effect at the next resume.
  void apply_work_split(WorkSplit split, sim::Nanos pause);
  const WorkSplit& work_split() const { return split_; }

  // --- Network levers (job_rebalance.cpp) ---
  // Re-pairing traffic around a bad link rebuilds the job's communicators:
  // the step in flight is abandoned and training resumes `pause` later.
  // Takes a leaf-spine link out of ECMP's choices, so the job's connections
  // re-hash onto the other spines; false when the engine cannot route around it.
  bool drain_fabric_link(sim::LinkId link, sim::Nanos pause);
  // Moves an RNIC's GPUs onto another RNIC of its host, the path NCCL's
  // fallback takes; communicators created at the next restart use it again.
  void move_nic_traffic(int host, int nic, int to_nic, sim::Nanos pause);

 private:
  struct Steady {
    std::uint64_t first = 0;
    std::uint64_t count = 0;
    sim::Nanos start = 0;
    sim::Nanos duration = 0;
    double scale = 1.0;  // the repeated iteration's times are stretched by this
  };

  // Iteration loop (training_job_iteration.cpp).
  void begin_iteration();
  bool try_fast_forward();
  void simulate_iteration();
  void finish_iteration(std::shared_ptr<IterationOutcome> outcome);
  void end_steady_run(std::uint64_t count);
  const std::vector<const telemetry::Record*>& records_to_repeat();
  void publish_hang(sim::Nanos at);
  void publish_step_records(const IterationOutcome& outcome);
  void after_iteration();
  FlowReuse flow_reuse();
  // The step in flight, if any, is abandoned and started again (after any
  // pending pause): a lever or a path change applies from the next step.
  void restart_step();

  // Lifecycle.
  void enter(JobState next);  // a transition of the job's state machine
  void interrupt();
  void publish_event(int kind, const std::string& error, const std::vector<std::string>& components);
  void write_checkpoint(bool then_reconfigure);
  void hang();
  void crash(const std::string& error);
  void stop_and_restart();
  void try_restart();
  void launch();
  void resume();
  void unplaceable();
  void placed();
  void on_repaired(int host);
  HostTrouble trouble() const { return {cluster_.failed_hosts(), cluster_.failed_gpus(), hosts_.isolated()}; }
  bool placement_healthy() const { return hosts_.all_usable(placement_->hosts()); }
  bool affected(int host, int gpu) const;
  void rebuild_placement(const std::vector<int>& hosts);
  sim::Nanos checkpoint_due() const { return last_checkpoint_ + job_.checkpoint_interval; }

  JobSpec job_;
  const sim::Topology& topology_;
  sim::NetworkEngine& engine_;
  sim::TelemetryBus& bus_;
  ClusterState cluster_;
  HostPool hosts_;
  std::unique_ptr<Placement> placement_;
  ProgressLedger ledger_;
  std::uint64_t job_version_ = 0;  // bumped by every re-placement and work split
  bool fast_forward_ = true;
  bool stepwise_rings_ = false;
  FlowOutcomeCache flow_outcomes_;
  const FlowSetArchive* flow_set_archive_ = nullptr;
  ChangeHorizon next_change_;
  sim::Nanos horizon_ = 0;

  JobState state_ = JobState::idle;
  std::uint64_t epoch_ = 0;  // bumped on every interruption; stale timers compare it
  std::shared_ptr<long> in_flight_ = std::make_shared<long>(0);  // engine flows of this job
  std::optional<Steady> steady_;
  std::shared_ptr<IterationRun> current_;   // the simulated iteration in flight
  std::shared_ptr<IterationOutcome> last_;  // the last simulated iteration, for fast-forward
  RecordFilter steady_filter_;
  std::shared_ptr<const IterationOutcome> filtered_for_;  // the outcome steady_records_ point into
  std::vector<const telemetry::Record*> steady_records_;  // its records that steady runs repeat
  std::uint64_t steady_records_version_ = 0;              // their records_version on the bus
  SteadyRunTemplate steady_template_;                     // publishes the stretches that repeat them
  bool reconfigure_pending_ = false;
  bool launched_ = false;                     // containers started once
  PlacementShortfall shortfall_;              // closed stretches
  std::optional<sim::Nanos> unplaced_since_;  // the open one
  std::uint64_t steady_generation_ = 0;       // a cut steady stretch ignores its planned end
  std::uint64_t executed_at_simulation_ = 0;  // executed iterations after the last simulated one
  bool hold_requested_ = false;
  bool parked_ = false;  // stopped at an iteration boundary by hold()
  std::function<void()> on_held_;

  std::uint64_t simulated_iterations_ = 0;
  sim::Nanos last_checkpoint_ = 0;
  int restarts_ = 0;
  int checkpoints_ = 0;
  WorkSplit split_;
  ContainerSet containers_{job_.name, topology_, &bus_};
  sim::Nanos pending_pause_ = 0;                      // a lever's pause, taken before the next iteration
  std::optional<StepCorruption> pending_corruption_;  // marks the next step to finish
};

}  // namespace gauntlet::models
