#include "harness/mitigation/falcon_ladder.hpp"

#include <algorithm>
#include <utility>

#include "models/job_rebalance.hpp"
#include "models/placement.hpp"
#include "sim/component_id.hpp"

namespace gauntlet::harness {
namespace {

constexpr LadderLever kOrder[] = {LadderLever::rebalance, LadderLever::relayout, LadderLever::repair,
                                  LadderLever::restart};

int position(LadderLever lever) { return static_cast<int>(lever); }

std::string lever_action(LadderLever lever) {
  switch (lever) {
    case LadderLever::rebalance:
      return "rebalance-microbatches";
    case LadderLever::relayout:
      return "move-layers";
    case LadderLever::repair:
      return "re-pair";
    case LadderLever::restart:
      return "checkpoint-restart";
  }
  return "";
}

models::WorkSplit even_split(const models::JobSpec& spec) {
  models::WorkSplit even;
  even.layers_per_stage = spec.total_layers() / spec.parallelism.pp;
  return even;
}

}  // namespace

void FalconLadderPolicy::on_alert(const Alert& alert, models::JobControl& /*job*/, sim::Nanos now) {
  if (alert.kind != "fail_slow" && alert.kind != "network") return;
  if (!episode_start_) {
    // The detector's stamp is its estimate of when the slowdown showed.
    episode_start_ = std::min(now, static_cast<sim::Nanos>(alert.time_s * 1e9));
    suspects_.clear();
    taken_.clear();
    repaired_.clear();
    named_by_network_.clear();
    undo_.reset();
    loss_s_ = 0;
    measure_from_ = 0;  // the slowdown is already in the iterations that raised the alert
    last_tick_ = *episode_start_;
  }
  // Later alerts of the episode add suspects for the levers still to come.
  for (const Suspect& s : alert.suspects) {
    if (std::find(suspects_.begin(), suspects_.end(), s.id) == suspects_.end()) suspects_.push_back(s.id);
    if (alert.kind == "network") named_by_network_.insert(s.id);
  }
}

bool FalconLadderPolicy::compute_slow(const models::JobControl& job) const {
  const std::vector<double> speeds = job.measurements().measured_replica_speeds(job.placement());
  return std::any_of(speeds.begin(), speeds.end(), [this](double s) { return s < thresholds_.slow_gpu_speed; });
}

bool FalconLadderPolicy::iterations_slow(const models::JobControl& job) const {
  if (job.timeline().empty() || healthy_ == 0) return false;
  return static_cast<double>(job.timeline().back().duration) >
         thresholds_.slow_iteration * static_cast<double>(healthy_);
}

void FalconLadderPolicy::on_tick(models::JobControl& job, sim::Nanos now) {
  if (job.state() != models::JobState::running) {
    last_tick_ = std::max(last_tick_, now);  // a restart's downtime is its own cost
    return;
  }
  if (!episode_start_) {
    if (job.work_split().even() && !job.timeline().empty()) {
      const sim::Nanos d = job.timeline().back().duration;
      healthy_ = healthy_ == 0 ? d : std::min(healthy_, d);
    }
    last_tick_ = now;
    return;
  }
  if (job.timeline().empty() || healthy_ == 0) return;
  const models::IterationSpan& last = job.timeline().back();
  if (last.start < measure_from_) return;  // the last step's effect is not measured yet
  if (undo_) {
    // A lever that did not make iterations faster only added its own cost
    // (an over-corrected split, the fallback RNIC's doubled load): undo it,
    // paying its pause once more.
    const Undo u = *std::exchange(undo_, std::nullopt);
    if (last.duration >= u.before) {
      if (u.lever == LadderLever::repair) {
        job.move_nic_traffic(u.repair.host, u.repair.nic, u.repair.nic, costs_.repair);
        record({sim::to_seconds(now), "restore-nic-traffic", {u.repair.component}, 0});
      } else {
        job.apply_work_split(u.split, cost(u.lever));
        record({sim::to_seconds(now), "undo-" + lever_action(u.lever), {}, 0});
      }
      measure_from_ = last_tick_ = now + cost(u.lever);
      return;
    }
  }
  // A split made for a slow GPU holds the healthy ones back once it is
  // fast again: with a split in place only the GPUs' speeds say "slow".
  const bool slow = compute_slow(job) || (job.work_split().even() && iterations_slow(job));
  if (!slow) {
    end_episode(job, now);
    return;
  }
  const double rate = std::max(0.0, 1 - static_cast<double>(healthy_) / static_cast<double>(last.duration));
  if (now > last_tick_) loss_s_ += sim::to_seconds(now - last_tick_) * rate;
  last_tick_ = now;
  const std::optional<LadderLever> lever = next_lever(job);
  if (lever && loss_s_ >= sim::to_seconds(cost(*lever))) take(job, *lever, now);
}

void FalconLadderPolicy::end_episode(models::JobControl& job, sim::Nanos now) {
  if (!job.work_split().even()) {
    job.apply_work_split(even_split(job.spec()), costs_.rebalance);
    record({sim::to_seconds(now), "even-split", {}, 0});
  }
  episode_start_.reset();
  last_tick_ = now;
}

sim::Nanos FalconLadderPolicy::cost(LadderLever lever) const {
  switch (lever) {
    case LadderLever::rebalance:
      return costs_.rebalance;
    case LadderLever::relayout:
      return costs_.relayout;
    case LadderLever::repair:
      return costs_.repair;
    case LadderLever::restart:
      return costs_.restart;
  }
  return costs_.restart;
}

bool FalconLadderPolicy::lever_applies(const models::JobControl& job, LadderLever lever) const {
  switch (lever) {
    case LadderLever::rebalance:
    case LadderLever::relayout:
      return compute_slow(job) && planned_split(job, lever).has_value();
    case LadderLever::repair:
      return !compute_slow(job) &&
             std::count(taken_.begin(), taken_.end(), LadderLever::repair) < thresholds_.max_repairs &&
             next_repair(job).has_value();
    case LadderLever::restart:
      return std::find(taken_.begin(), taken_.end(), LadderLever::restart) == taken_.end() && job.spares_left() > 0 &&
             !restart_target(job).empty();
  }
  return false;
}

// The ladder only climbs: the next lever is the first applicable one above
// the last taken, or another re-pairing target at the same rung.
std::optional<LadderLever> FalconLadderPolicy::next_lever(const models::JobControl& job) const {
  const int at = taken_.empty() ? -1 : position(taken_.back());
  for (LadderLever lever : kOrder) {
    const int p = position(lever);
    if (p < at || (p == at && lever != LadderLever::repair)) continue;
    if (lever_applies(job, lever)) return lever;
  }
  return std::nullopt;
}

void FalconLadderPolicy::take(models::JobControl& job, LadderLever lever, sim::Nanos now) {
  undo_ = Undo{lever, job.work_split(), {}, job.timeline().back().duration};
  switch (lever) {
    case LadderLever::rebalance:
    case LadderLever::relayout:
      job.apply_work_split(*planned_split(job, lever), cost(lever));
      record({sim::to_seconds(now), lever_action(lever), {}, 0});
      break;
    case LadderLever::repair: {
      const Repair r = *next_repair(job);
      if (r.link >= 0) {
        job.drain_fabric_link(r.link, costs_.repair);
        undo_.reset();  // routing around a link the alerts named costs nothing while it lasts
      } else {
        undo_->repair = r;
        job.move_nic_traffic(r.host, r.nic, r.to, costs_.repair);
      }
      repaired_.insert(r.component);
      // An RNIC that took another's traffic is not moved again.
      if (r.to >= 0) repaired_.insert(sim::ComponentId::make_nic(r.host, r.to).str());
      record({sim::to_seconds(now), r.action, {r.component}, 0});
      break;
    }
    case LadderLever::restart:
      undo_.reset();
      restart(job, now);
      break;
  }
  taken_.push_back(lever);
  loss_s_ = 0;
  // Accrual resumes with the first iteration begun after the lever's pause.
  measure_from_ = last_tick_ = now + cost(lever);
}

// Every replica runs (its micro-batches + pp - 1) slots of its slowest
// stage, and layer counts are shared by all replicas: a stage's layers cost
// layers x the largest (m_i + pp - 1) / speed over the replicas. Its
// inverse is the stage's speed for the balance, so a layer move on top of a
// micro-batch split only corrects what that split left.
std::vector<double> FalconLadderPolicy::stage_paces(const models::JobControl& job, const models::WorkSplit& split) {
  const models::JobSpec& spec = job.spec();
  const int pp = spec.parallelism.pp;
  std::vector<double> worst(static_cast<std::size_t>(pp), 0);
  for (int r = 0; r < job.placement().ranks(); ++r) {
    const models::RankPlace& p = job.placement().rank(r);
    const double slots = split.replica_microbatches(p.dp, spec.microbatches) + pp - 1;
    double& w = worst[static_cast<std::size_t>(p.pp)];
    w = std::max(w, slots / job.measurements().measured_rank_speed(job.placement(), r));
  }
  std::vector<double> pace;
  for (double w : worst) pace.push_back(1 / w);
  return pace;
}

// The compute levers only help when there is something to shift work
// between: the split they would make, if it differs from the current one.
std::optional<models::WorkSplit> FalconLadderPolicy::planned_split(const models::JobControl& job,
                                                                   LadderLever lever) const {
  const models::JobSpec& spec = job.spec();
  const int dp = spec.parallelism.dp, pp = spec.parallelism.pp;
  const int layers = spec.total_layers();
  models::WorkSplit split = job.work_split();
  split.layers_per_stage = layers / pp;
  if (lever == LadderLever::rebalance && dp > 1 && spec.microbatches > 1)
    split.microbatches = models::balance_microbatches(job.measurements().measured_replica_speeds(job.placement()),
                                                      dp * spec.microbatches, pp);
  else if (lever == LadderLever::relayout && pp > 1 && layers > pp) {
    split.stage_layers = models::balance_layers(stage_paces(job, split), layers);
    if (std::all_of(split.stage_layers.begin(), split.stage_layers.end(),
                    [&](int l) { return l == split.layers_per_stage; }))
      split.stage_layers.clear();  // the even split is already the best
  } else
    return std::nullopt;
  if (split.microbatches == job.work_split().microbatches && split.stage_layers == job.work_split().stage_layers)
    return std::nullopt;
  return split;
}

// The first suspect, in the order the episode's alerts named them, that
// re-pairing has not yet moved traffic around.
std::optional<FalconLadderPolicy::Repair> FalconLadderPolicy::next_repair(const models::JobControl& job) const {
  const sim::Topology& topology = job.topology();
  const int rnics = topology.shape().rnics_per_host;
  const models::Placement& placement = job.placement();
  auto carries = [&](sim::EndpointId e) {
    for (int r = 0; r < placement.ranks(); ++r)
      if (job.rank_endpoint(r) == e) return true;
    return false;
  };
  for (const std::string& name : suspects_) {
    const auto id = sim::ComponentId::parse(name);
    if (!id || !topology.contains(*id)) continue;
    if (id->kind == sim::ComponentKind::fabric_link) {
      if (repaired_.count(name)) continue;
      Repair r{"drain-fabric-link", name};
      r.link = topology.fabric_link(id->leaf, id->spine);
      return r;
    }
    int host = -1, nic = -1;
    if (id->kind == sim::ComponentKind::nic || id->kind == sim::ComponentKind::host_link ||
        id->kind == sim::ComponentKind::flow_table) {
      host = id->host;
      nic = id->index;
    } else if (id->kind == sim::ComponentKind::gpu && named_by_network_.count(name)) {
      // A worker of a slow communicator: the RNIC its traffic leaves on.
      for (int r = 0; r < placement.ranks(); ++r)
        if (placement.rank(r).host == id->host && placement.rank(r).gpu == id->index) {
          host = id->host;
          nic = topology.nic_of(job.rank_endpoint(r));
        }
    }
    if (host < 0 || rnics < 2 || !move_pays(job)) continue;
    const std::string rnic = sim::ComponentId::make_nic(host, nic).str();
    const int to = *models::nccl_fallback_rnic(nic, rnics);  // where NCCL itself would fall back
    const std::string target = sim::ComponentId::make_nic(host, to).str();
    if (repaired_.count(rnic) || repaired_.count(target) || !carries(topology.endpoint(host, nic))) continue;
    Repair r{"move-nic-traffic", rnic};
    r.host = host;
    r.nic = nic;
    r.to = to;
    return r;
  }
  return std::nullopt;
}

// Moving an RNIC's GPUs onto a sibling at best leaves that sibling carrying
// two rings' edges at half rate each: the iteration's communication, about
// healthy minus compute, comes on top of the healthy time. The move is worth
// a rebuild only when iterations are slower than that by a clear margin.
bool FalconLadderPolicy::move_pays(const models::JobControl& job) const {
  if (job.timeline().empty() || healthy_ == 0) return false;
  const double healthy = static_cast<double>(healthy_);
  const double communication = std::max(0.0, healthy - static_cast<double>(job.spec().compute_per_iteration));
  return static_cast<double>(job.timeline().back().duration) > thresholds_.slow_iteration * (healthy + communication);
}

// What a restart swaps out: the first suspect on a host the job uses;
// failing that, for a compute slowdown, the GPU measured slowest. A suspect in
// the fabric (a switch, a leaf-spine link) leaves nothing to swap.
std::string FalconLadderPolicy::restart_target(const models::JobControl& job) const {
  for (const std::string& name : suspects_) {
    const int host = host_of_component(name);
    if (host >= 0 && job.placement().uses_host(host)) return name;
  }
  if (!compute_slow(job)) return "";
  std::string target;
  double slowest = thresholds_.slow_gpu_speed;
  for (int r = 0; r < job.placement().ranks(); ++r) {
    const double speed = job.measurements().measured_rank_speed(job.placement(), r);
    if (speed < slowest) {
      slowest = speed;
      target = job.placement().worker_name(r);
    }
  }
  return target;
}

// The last rung: roll back to the checkpoint and restart with the
// target's host swapped for a spare.
void FalconLadderPolicy::restart(models::JobControl& job, sim::Nanos now) {
  const std::vector<std::string> components = {restart_target(job)};
  const int spares = job.isolate(components);
  // The restart starts from an even split: it rebuilds the layout anyway.
  job.apply_work_split(even_split(job.spec()), 0);
  record({sim::to_seconds(now), "checkpoint-restart", components, spares});
}

}  // namespace gauntlet::harness
