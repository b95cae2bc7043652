// The job's lifecycle: start, checkpoints, hangs, crashes, restarts,
// re-placement and isolation. The iteration loop is in
// training_job_iteration.cpp.
#include "models/training_job.hpp"

#include <algorithm>

#include "models/spare_layout.hpp"
#include "models/training_job_outcome.hpp"
#include "sim/component_id.hpp"

namespace gauntlet::models {

TrainingJob::TrainingJob(const JobSpec& job, const sim::Topology& topology, sim::NetworkEngine& engine,
                         sim::TelemetryBus& bus)
    : job_(job),
      topology_(topology),
      engine_(engine),
      bus_(bus),
      placement_(std::make_unique<Placement>(job, topology, plan_hosts(job, topology).job_hosts)),
      speed_(static_cast<std::size_t>(topology.hosts() * topology.shape().gpus_per_host), 1.0),
      fallback_(static_cast<std::size_t>(topology.endpoints())) {
  for (std::size_t e = 0; e < fallback_.size(); ++e) fallback_[e] = static_cast<sim::EndpointId>(e);
  spare_pool_ = plan_hosts(job, topology).spares;
}

void TrainingJob::start(sim::Nanos at, sim::Nanos horizon) {
  horizon_ = horizon;
  engine_.schedule_at(at, [this] {
    state_ = JobState::running;
    last_checkpoint_ = engine_.now();
    containers_.start_all(engine_.now(), *placement_);
    publish_event(telemetry::JobEvent::START, "", {});
    if (!placement_healthy()) {
      hang();
      return;
    }
    begin_iteration();
  });
}

void TrainingJob::set_gpu_speed(int host, int gpu, double speed) {
  speed_[static_cast<std::size_t>(host * topology_.shape().gpus_per_host + gpu)] = speed;
  ++compute_version_;
}

double TrainingJob::gpu_speed(int host, int gpu) const {
  return speed_[static_cast<std::size_t>(host * topology_.shape().gpus_per_host + gpu)];
}

sim::EndpointId TrainingJob::rank_endpoint(int rank) const {
  return fallback_[static_cast<std::size_t>(placement_->rank(rank).endpoint)];
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
  current_.reset();
  parked_ = false;  // a held job resumes into the hold again
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
  const std::uint64_t saved = progress_;
  engine_.schedule_at(engine_.now() + job_.checkpoint_cost, [this, epoch, saved, then_reconfigure] {
    if (epoch != epoch_) return;  // interrupted: the checkpoint was never committed
    checkpoint_progress_ = saved;
    last_checkpoint_ = engine_.now();
    ++checkpoints_;
    publish_event(telemetry::JobEvent::CHECKPOINT, "", {});
    if (!then_reconfigure) {
      begin_iteration();
      return;
    }
    // A planned stop right after a checkpoint: nothing to roll back.
    ++epoch_;
    containers_.stop_all(engine_.now(), StopReason::reconfigure, {failed_hosts_, failed_gpus_, isolated_});
    state_ = JobState::waiting;
    try_restart();
  });
}

void TrainingJob::hang() {
  interrupt();
  state_ = JobState::hung;
  publish_hang(engine_.now());
  const std::uint64_t epoch = epoch_;
  engine_.schedule_at(engine_.now() + job_.collective_timeout, [this, epoch] {
    if (epoch == epoch_) crash("NCCL Error");
  });
}

void TrainingJob::crash(const std::string& error) {
  interrupt();
  publish_event(telemetry::JobEvent::CRASH, error, {});
  containers_.stop_all(engine_.now(), StopReason::restart, {failed_hosts_, failed_gpus_, isolated_});
  roll_back();
  state_ = JobState::waiting;
  try_restart();
}

void TrainingJob::roll_back() {
  while (!timeline_.empty() && timeline_.back().first >= checkpoint_progress_) {
    lost_time_ += static_cast<sim::Nanos>(timeline_.back().count) * timeline_.back().duration;
    timeline_.pop_back();
  }
  if (!timeline_.empty()) {
    IterationSpan& back = timeline_.back();
    if (back.first + back.count > checkpoint_progress_) {
      const std::uint64_t cut = back.first + back.count - checkpoint_progress_;
      lost_time_ += static_cast<sim::Nanos>(cut) * back.duration;
      back.count -= cut;
    }
  }
  progress_ = checkpoint_progress_;
}

bool TrainingJob::host_usable(int host) const {
  if (failed_hosts_.count(host) || isolated_.count(host)) return false;
  auto it = failed_gpus_.lower_bound({host, 0});
  return it == failed_gpus_.end() || it->first != host;
}

bool TrainingJob::placement_healthy() const {
  for (int h : placement_->hosts())
    if (!host_usable(h)) return false;
  return true;
}

bool TrainingJob::affected(int host, int gpu) const {
  if (!placement_->uses_host(host)) return false;
  if (gpu < 0) return true;
  for (int r = 0; r < placement_->ranks(); ++r)
    if (placement_->rank(r).host == host && placement_->rank(r).gpu == gpu) return true;
  return false;
}

int TrainingJob::spares_left() const {
  int n = 0;
  for (int h : spare_pool_) n += host_usable(h) ? 1 : 0;
  return n;
}

// Waiting -> restarting: picks a usable host for every slot (a spare for
// each unusable one) and resumes restart_cost later; keeps waiting when the
// job cannot be placed.
void TrainingJob::try_restart() {
  if (state_ != JobState::waiting) return;
  std::vector<int> hosts = reconfigure_pending_ ? shifted_hosts() : placement_->hosts();
  std::vector<int> pool = spare_pool_;
  int taken = 0;
  for (int& h : hosts) {
    if (host_usable(h)) continue;
    const auto spare = pick_spare(pool, h, topology_, job_.spare_layout, [&](int s) { return host_usable(s); });
    if (!spare) return;  // wait for a repair
    h = pool[*spare];
    pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(*spare));
    ++taken;
  }
  spares_used_ += taken;
  reconfigure_pending_ = false;
  state_ = JobState::restarting;
  const std::uint64_t epoch = epoch_;
  engine_.schedule_at(engine_.now() + job_.restart_cost, [this, epoch, hosts] {
    if (epoch != epoch_) return;
    if (hosts != placement_->hosts()) rebuild_placement(hosts);
    if (!placement_healthy()) {  // a host failed while the job was restarting
      state_ = JobState::waiting;
      try_restart();
      return;
    }
    resume();
  });
}

void TrainingJob::resume() {
  // NCCL picks RNICs when communicators are created: a repaired RNIC is used
  // again only from a restart on.
  for (auto [host, nic] : pending_fallback_clear_) {
    const auto e = static_cast<std::size_t>(topology_.endpoint(host, nic));
    fallback_[e] = static_cast<sim::EndpointId>(e);
  }
  if (!pending_fallback_clear_.empty()) ++layout_version_;
  pending_fallback_clear_.clear();
  state_ = JobState::running;
  ++restarts_;
  last_checkpoint_ = engine_.now();
  containers_.start_all(engine_.now(), *placement_);
  publish_event(telemetry::JobEvent::RESTART, "", {});
  begin_iteration();
}

void TrainingJob::rebuild_placement(std::vector<int> hosts) {
  const std::vector<int> old = placement_->hosts();
  placement_ = std::make_unique<Placement>(job_, topology_, hosts);
  ++layout_version_;
  last_.reset();
  for (int h : hosts) spare_pool_.erase(std::remove(spare_pool_.begin(), spare_pool_.end(), h), spare_pool_.end());
  for (int h : old) {
    if (placement_->uses_host(h) || isolated_.count(h)) continue;
    // A healthy host the job left stays in its pool; a broken one rejoins
    // when it is repaired.
    if (host_usable(h)) spare_pool_.push_back(h);
    else replaced_.insert(h);
  }
  std::sort(spare_pool_.begin(), spare_pool_.end());
}

std::vector<int> TrainingJob::shifted_hosts() const {
  std::vector<int> pool = placement_->hosts();
  for (int h : spare_pool_)
    if (host_usable(h)) pool.push_back(h);
  std::sort(pool.begin(), pool.end());
  std::vector<int> out;
  for (int h : placement_->hosts()) {
    const auto at = static_cast<std::size_t>(std::find(pool.begin(), pool.end(), h) - pool.begin());
    out.push_back(pool[(at + 1) % pool.size()]);
  }
  return out;
}

// --- Fault hooks ---

void TrainingJob::fail_gpu(int host, int gpu) {
  failed_gpus_.insert({host, gpu});
  if (state_ == JobState::running && affected(host, gpu)) hang();
}

void TrainingJob::fail_host(int host) {
  failed_hosts_.insert(host);
  if (state_ == JobState::running && affected(host, -1)) hang();
}

void TrainingJob::repair_gpu(int host, int gpu) {
  failed_gpus_.erase({host, gpu});
  release_host(host);
}

void TrainingJob::repair_host(int host) {
  failed_hosts_.erase(host);
  release_host(host);
}

// A host whose last fault was repaired comes back from isolation and rejoins
// the job's pool if the job left it.
void TrainingJob::release_host(int host) {
  const bool broken = failed_hosts_.count(host) ||
                      [&] {
                        auto it = failed_gpus_.lower_bound({host, 0});
                        return it != failed_gpus_.end() && it->first == host;
                      }();
  if (broken) return;
  if (isolated_.erase(host) && !placement_->uses_host(host)) replaced_.insert(host);
  if (replaced_.erase(host) && !placement_->uses_host(host)) {
    spare_pool_.push_back(host);
    std::sort(spare_pool_.begin(), spare_pool_.end());
  }
  if (state_ == JobState::waiting) try_restart();
}

bool TrainingJob::gpu_failed(int host, int gpu) const {
  return failed_hosts_.count(host) || failed_gpus_.count({host, gpu});
}

bool TrainingJob::host_failed(int host) const { return failed_hosts_.count(host) > 0; }

void TrainingJob::set_nic_fallback(int host, int nic, int fallback_nic) {
  const auto e = static_cast<std::size_t>(topology_.endpoint(host, nic));
  pending_fallback_clear_.erase(
      std::remove(pending_fallback_clear_.begin(), pending_fallback_clear_.end(), std::pair{host, nic}),
      pending_fallback_clear_.end());
  fallback_[e] = topology_.endpoint(host, fallback_nic);
  ++layout_version_;
  bool used = false;
  for (int r = 0; r < placement_->ranks() && !used; ++r) used = placement_->rank(r).endpoint == static_cast<int>(e);
  // The step in flight had traffic on the dead link: NCCL retries it on the
  // fallback. A checkpoint being written is not affected.
  if (state_ == JobState::running && used && (current_ || steady_)) {
    interrupt();
    begin_iteration();
  }
}

void TrainingJob::clear_nic_fallback(int host, int nic) { pending_fallback_clear_.push_back({host, nic}); }

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
  int free_spares = spares_left();
  for (int h : hosts) {
    // The job cannot shrink: a host it uses leaves only if a spare takes
    // its place.
    if (placement_->uses_host(h) && !isolated_.count(h)) {
      if (free_spares == 0) continue;
      --free_spares;
    }
    isolated_.insert(h);
  }
  const int before = spares_used_;
  if (state_ == JobState::running || state_ == JobState::hung || state_ == JobState::restarting ||
      state_ == JobState::waiting) {
    interrupt();
    containers_.stop_all(engine_.now(), StopReason::restart, {failed_hosts_, failed_gpus_, isolated_});
    roll_back();
    state_ = JobState::waiting;
    try_restart();
  }
  return spares_used_ - before;
}

}  // namespace gauntlet::models
