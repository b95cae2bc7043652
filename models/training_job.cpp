// The job's lifecycle: start, checkpoints, hangs, crashes, restarts,
// re-placement and isolation, and the fault hooks that set them off. The
// iteration loop is in training_job_iteration.cpp.
#include "models/training_job.hpp"

#include <algorithm>

#include "models/spare_layout.hpp"
#include "sim/component_id.hpp"
#include "sim/contract.hpp"

namespace gauntlet::models {
namespace {

// The job's life: it starts once; a running job hangs or crashes; a hung
// one crashes; a crashed one waits for hosts, restarts and runs again (or
// waits again when a host fails meanwhile). Isolation stops it from any
// state but idle, into waiting.
bool allowed(JobState from, JobState to) {
  switch (from) {
    case JobState::idle:
      return to == JobState::running || to == JobState::waiting;  // waiting: no healthy hosts to start on
    case JobState::running:
      return to == JobState::hung || to == JobState::waiting;
    case JobState::hung:
      return to == JobState::waiting;
    case JobState::waiting:
      return to == JobState::restarting || to == JobState::waiting;
    case JobState::restarting:
      return to == JobState::running || to == JobState::waiting;
  }
  return false;
}

}  // namespace

TrainingJob::TrainingJob(const JobSpec& job, const sim::Topology& topology, sim::NetworkEngine& engine,
                         sim::TelemetryBus& bus)
    : job_(job),
      topology_(topology),
      engine_(engine),
      bus_(bus),
      cluster_(topology),
      hosts_(plan_hosts(job, topology).spares, cluster_, topology, job.spare_layout),
      placement_(std::make_unique<Placement>(job, topology, plan_hosts(job, topology).job_hosts)) {}

void TrainingJob::enter(JobState next) {
  GAUNTLET_INVARIANT(allowed(state_, next), "job '" + job_.name + "' from state " +
                                                std::to_string(static_cast<int>(state_)) + " to " +
                                                std::to_string(static_cast<int>(next)));
  state_ = next;
}

void TrainingJob::start(sim::Nanos at, sim::Nanos horizon) {
  horizon_ = horizon;
  engine_.schedule_at(at, [this] {
    last_checkpoint_ = engine_.now();
    // A launcher places the job on healthy hosts: spares stand in for the
    // ones already down; with too few it waits for repairs.
    if (!placement_healthy()) {
      const std::optional<std::vector<int>> hosts = hosts_.restart_hosts(placement_->hosts());
      if (!hosts) {
        enter(JobState::waiting);
        unplaceable();
        return;
      }
      rebuild_placement(*hosts);
    }
    enter(JobState::running);
    launch();
  });
}

void TrainingJob::launch() {
  launched_ = true;
  containers_.start_all(engine_.now(), *placement_);
  publish_event(telemetry::JobEvent::START, "", {});
  begin_iteration();
}

// The job could not be placed: a stretch opens (or goes on), as short of
// hosts as it now is.
void TrainingJob::unplaceable() {
  if (!unplaced_since_) {
    unplaced_since_ = engine_.now();
    ++shortfall_.stretches;
  }
  shortfall_.most_hosts_short = std::max({shortfall_.most_hosts_short, hosts_.hosts_short(placement_->hosts()), 1});
}

void TrainingJob::placed() {
  if (!unplaced_since_) return;
  shortfall_.waited += engine_.now() - *unplaced_since_;
  unplaced_since_.reset();
}

PlacementShortfall TrainingJob::shortfall(sim::Nanos now) const {
  PlacementShortfall out = shortfall_;
  if (unplaced_since_ && now > *unplaced_since_) out.waited += now - *unplaced_since_;
  return out;
}

sim::EndpointId TrainingJob::rank_endpoint(int rank) const {
  return cluster_.traffic_endpoint(placement_->rank(rank).endpoint);
}

void TrainingJob::publish_event(int kind, const std::string& error, const std::vector<std::string>& components) {
  telemetry::Record record;
  auto* e = record.mutable_job();
  e->set_kind(static_cast<telemetry::JobEvent::Kind>(kind));
  e->set_time_ns(engine_.now());
  e->set_error(error);
  for (const std::string& c : components) e->add_components(c);
  bus_.publish(std::move(record));
}

// Stops whatever the job is doing now: iterations of a steady run that ended
// before now still count; the iteration in flight and any checkpoint being
// written are abandoned.
void TrainingJob::interrupt() {
  if (steady_) end_steady_run(static_cast<std::uint64_t>((engine_.now() - steady_->start) / steady_->duration));
  if (current_) current_->cancel();
  current_.reset();
  parked_ = false;              // a held job resumes into the hold again
  pending_corruption_.reset();  // the corrupted step never finished
  ++epoch_;
}

void TrainingJob::hold(std::function<void()> on_held) {
  hold_requested_ = true;
  on_held_ = std::move(on_held);
  cut_steady_run();
}

void TrainingJob::release() {
  hold_requested_ = false;
  on_held_ = {};
  if (!parked_) return;
  parked_ = false;
  begin_iteration();
}

void TrainingJob::write_checkpoint(bool then_reconfigure) {
  const std::uint64_t epoch = epoch_;
  const std::uint64_t saved = ledger_.progress();
  engine_.schedule_at(engine_.now() + job_.checkpoint_cost, [this, epoch, saved, then_reconfigure] {
    if (epoch != epoch_) return;  // interrupted: the checkpoint was never committed
    // No step runs while a checkpoint is written: it holds what was done.
    GAUNTLET_INVARIANT(saved == ledger_.progress() && !current_ && !steady_);
    ledger_.commit_checkpoint(saved);
    last_checkpoint_ = engine_.now();
    ++checkpoints_;
    publish_event(telemetry::JobEvent::CHECKPOINT, "", {});
    if (!then_reconfigure) {
      begin_iteration();
      return;
    }
    // A planned stop right after a checkpoint: nothing to roll back.
    ++epoch_;
    containers_.stop_all(engine_.now(), StopReason::reconfigure, trouble());
    enter(JobState::waiting);
    try_restart();
  });
}

void TrainingJob::hang() {
  interrupt();
  enter(JobState::hung);
  publish_hang(engine_.now());
  const std::uint64_t epoch = epoch_;
  engine_.schedule_at(engine_.now() + job_.collective_timeout, [this, epoch] {
    if (epoch == epoch_) crash("NCCL Error");
  });
}

void TrainingJob::crash(const std::string& error) {
  interrupt();
  publish_event(telemetry::JobEvent::CRASH, error, {});
  stop_and_restart();
}

// Whatever the job was doing is abandoned: its containers stop, it rolls
// back to its last checkpoint and restarts as soon as it can be placed.
void TrainingJob::stop_and_restart() {
  containers_.stop_all(engine_.now(), StopReason::restart, trouble());
  ledger_.roll_back();
  enter(JobState::waiting);
  try_restart();
}

bool TrainingJob::affected(int host, int gpu) const {
  if (!placement_->uses_host(host)) return false;
  if (gpu < 0) return true;
  for (int r = 0; r < placement_->ranks(); ++r)
    if (placement_->rank(r).host == host && placement_->rank(r).gpu == gpu) return true;
  return false;
}

// Waiting -> restarting: picks a usable host for every slot (a spare for
// each unusable one) and resumes restart_cost later; keeps waiting when the
// job cannot be placed.
void TrainingJob::try_restart() {
  if (state_ != JobState::waiting) return;
  std::optional<std::vector<int>> hosts = hosts_.restart_hosts(placement_->hosts());
  if (!hosts) {  // wait for a repair
    unplaceable();
    return;
  }
  placed();
  if (reconfigure_pending_) hosts = hosts_.shifted(*hosts);
  reconfigure_pending_ = false;
  enter(JobState::restarting);
  const std::uint64_t epoch = epoch_;
  engine_.schedule_at(engine_.now() + job_.restart_cost, [this, epoch, hosts = *hosts] {
    if (epoch != epoch_) return;
    if (hosts != placement_->hosts()) rebuild_placement(hosts);
    if (!placement_healthy()) {  // a host failed while the job was restarting
      enter(JobState::waiting);
      try_restart();
      return;
    }
    resume();
  });
}

void TrainingJob::resume() {
  GAUNTLET_INVARIANT(placement_healthy(), "job '" + job_.name + "' resumed on a broken host");
  if (!launched_) {  // placed at last, after waiting from the start
    enter(JobState::running);
    last_checkpoint_ = engine_.now();
    launch();
    return;
  }
  // NCCL picks RNICs when communicators are created: a repaired RNIC is used
  // again only from a restart on.
  cluster_.restart_communicators();
  enter(JobState::running);
  ++restarts_;
  last_checkpoint_ = engine_.now();
  containers_.start_all(engine_.now(), *placement_);
  publish_event(telemetry::JobEvent::RESTART, "", {});
  begin_iteration();
}

void TrainingJob::rebuild_placement(const std::vector<int>& hosts) {
  const std::vector<int> before = placement_->hosts();
  placement_ = std::make_unique<Placement>(job_, topology_, hosts);
  ++job_version_;
  last_.reset();
  hosts_.moved(before, *placement_);
}

// --- Fault hooks ---

void TrainingJob::fail_gpu(int host, int gpu) {
  cluster_.fail_gpu(host, gpu);
  if (state_ == JobState::running && affected(host, gpu)) hang();
}

void TrainingJob::fail_gpu(int host, int gpu, const std::string& error) {
  cluster_.fail_gpu(host, gpu);
  if ((state_ == JobState::running || state_ == JobState::hung) && affected(host, gpu)) crash(error);
}

void TrainingJob::crash_on_gpu(int host, int gpu, const std::string& error) {
  if ((state_ == JobState::running || state_ == JobState::hung) && affected(host, gpu)) crash(error);
}

void TrainingJob::set_fleet_pace(double pace) {
  if (pace == cluster_.pace()) return;
  cluster_.set_pace(pace);
  cut_steady_run();
}

void TrainingJob::corrupt_step(int host, int gpu, const StepCorruption& corruption) {
  if (state_ != JobState::running || !affected(host, gpu)) return;
  pending_corruption_ = corruption;
  cut_steady_run();  // the marked step is simulated and published on its own
}

void TrainingJob::fail_host(int host) {
  cluster_.fail_host(host);
  if (state_ == JobState::running && affected(host, -1)) hang();
}

void TrainingJob::repair_gpu(int host, int gpu) {
  cluster_.repair_gpu(host, gpu);
  on_repaired(host);
}

void TrainingJob::repair_host(int host) {
  cluster_.repair_host(host);
  on_repaired(host);
}

void TrainingJob::on_repaired(int host) {
  if (cluster_.host_broken(host)) return;
  hosts_.repaired(host, *placement_);
  if (state_ == JobState::waiting) try_restart();
}

void TrainingJob::set_nic_fallback(int host, int nic, int fallback_nic) {
  cluster_.set_nic_fallback(host, nic, fallback_nic);
  const sim::EndpointId e = topology_.endpoint(host, nic);
  bool used = false;
  for (int r = 0; r < placement_->ranks() && !used; ++r) used = placement_->rank(r).endpoint == e;
  // The step in flight had traffic on the dead link: NCCL retries it on the
  // fallback. A checkpoint being written is not affected.
  if (state_ == JobState::running && used) restart_step();
}

void TrainingJob::fail_collective(const std::string& error) {
  if (state_ == JobState::running) crash(error);
}

void TrainingJob::reconfigure() {
  reconfigure_pending_ = true;
  // An idle loop (waiting) applies it at its restart; a running one at the
  // next iteration boundary.
}

// --- Mitigation ---

int TrainingJob::isolate(const std::vector<std::string>& components) {
  std::set<int> hosts;
  for (const std::string& name : components) {
    const auto id = sim::ComponentId::parse(name);
    if (!id || id->host < 0) continue;
    hosts.insert(id->host);
  }
  publish_event(telemetry::JobEvent::ISOLATION, "", components);
  hosts_.isolate(hosts, *placement_);
  const int before = hosts_.spares_used();
  if (state_ != JobState::idle) {
    interrupt();
    stop_and_restart();
  }
  return hosts_.spares_used() - before;
}

}  // namespace gauntlet::models
