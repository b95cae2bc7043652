#include "harness/mitigation/falcon_ladder.hpp"

#include <algorithm>

#include "models/job_rebalance.hpp"

namespace gauntlet::harness {
namespace {

// Below this a GPU counts as slow, and iterations this much longer than the
// healthy ones count as a slowdown: well above the run-to-run jitter of
// steady iterations, well below the slowdowns worth a lever.
constexpr double kSlowSpeed = 0.97;
constexpr double kSlowIteration = 1.05;

}  // namespace

void FalconLadderPolicy::on_alert(const Alert& alert, models::TrainingJob& /*job*/, sim::Nanos now) {
  if (alert.kind != "fail_slow" && alert.kind != "network") return;
  if (episode_start_) return;  // one ladder per episode
  // The detector's stamp is its estimate of when the slowdown showed.
  episode_start_ = std::min(now, static_cast<sim::Nanos>(alert.time_s * 1e9));
  suspect_ = alert.suspects.empty() ? "" : alert.suspects.front().id;
  rung_ = 0;
}

bool FalconLadderPolicy::compute_slow(const models::TrainingJob& job) const {
  const std::vector<double> speeds = job.replica_speeds();
  return std::any_of(speeds.begin(), speeds.end(), [](double s) { return s < kSlowSpeed; });
}

bool FalconLadderPolicy::iterations_slow(const models::TrainingJob& job) const {
  if (job.timeline().empty() || healthy_ == 0) return false;
  return static_cast<double>(job.timeline().back().duration) > kSlowIteration * static_cast<double>(healthy_);
}

void FalconLadderPolicy::on_tick(models::TrainingJob& job, sim::Nanos now) {
  if (job.state() != models::JobState::running) return;
  if (!episode_start_) {
    if (job.work_split().even() && !job.timeline().empty()) {
      const sim::Nanos d = job.timeline().back().duration;
      healthy_ = healthy_ == 0 ? d : std::min(healthy_, d);
    }
    return;
  }
  const bool slow = compute_slow(job) || (job.work_split().even() && iterations_slow(job));
  if (!slow) {
    // Over: a split made for a slow GPU now holds the healthy ones back.
    if (!job.work_split().even()) {
      models::WorkSplit even;
      even.layers_per_stage = costs_.layers_per_stage;
      job.apply_work_split(even, costs_.rebalance);
      record({sim::to_seconds(now), "even-split", {}, 0});
    }
    episode_start_.reset();
    return;
  }
  climb(job, now);
}

sim::Nanos FalconLadderPolicy::cost(int rung) const {
  return rung == 1 ? costs_.rebalance : rung == 2 ? costs_.relayout : costs_.restart;
}

// Ski-rental: a rung is due once the slowdown has lasted longer than its
// cost. When several come due at once (a late alert), only the highest is
// taken: the cheaper ones' price has been paid in slowdown already. A rung
// with nothing to act on falls back to the next cheaper one not yet taken.
void FalconLadderPolicy::climb(models::TrainingJob& job, sim::Nanos now) {
  const sim::Nanos elapsed = now - *episode_start_;
  int due = rung_;
  while (due < 3 && elapsed >= cost(due + 1)) ++due;
  if (due == rung_) return;
  const int from = rung_;
  rung_ = due;
  if (due == 3) {
    restart(job, now);
    return;
  }
  for (int k = due; k > from; --k)
    if (shift_work(job, k, now)) return;
}

// The middle rungs only help a compute slowdown (a GPU or CPU), and only
// when there is something to shift work between.
bool FalconLadderPolicy::shift_work(models::TrainingJob& job, int rung, sim::Nanos now) {
  if (!compute_slow(job)) return false;
  const models::JobSpec& spec = job.spec();
  const int dp = spec.parallelism.dp, pp = spec.parallelism.pp;
  models::WorkSplit split = job.work_split();
  split.layers_per_stage = costs_.layers_per_stage;
  std::string action;
  if (rung == 1 && dp > 1 && spec.microbatches > 1) {
    split.microbatches = models::balance_microbatches(job.replica_speeds(), dp * spec.microbatches, pp);
    action = "rebalance-microbatches";
  } else if (rung == 2 && pp > 1 && costs_.layers_per_stage > 1) {
    split.stage_layers = models::balance_layers(job.stage_speeds(), costs_.layers_per_stage * pp);
    action = "move-layers";
  }
  if (action.empty() || (split.microbatches == job.work_split().microbatches &&
                         split.stage_layers == job.work_split().stage_layers))
    return false;
  job.apply_work_split(std::move(split), cost(rung));
  record({sim::to_seconds(now), action, {}, 0});
  return true;
}

// The last rung: roll back to the checkpoint and restart, with the host of
// the slow component swapped for a spare when one is left. The detector's
// top suspect names it; failing that, the job's slowest GPU; a suspect in
// the fabric (a switch, a leaf-spine link) leaves nothing to swap.
void FalconLadderPolicy::restart(models::TrainingJob& job, sim::Nanos now) {
  std::string target = host_of_component(suspect_) >= 0 ? suspect_ : "";
  if (target.empty() && compute_slow(job)) {
    double slowest = kSlowSpeed;
    for (int r = 0; r < job.placement().ranks(); ++r) {
      const models::RankPlace& p = job.placement().rank(r);
      if (job.gpu_speed(p.host, p.gpu) < slowest) {
        slowest = job.gpu_speed(p.host, p.gpu);
        target = job.placement().worker_name(r);
      }
    }
  }
  // A restart on the same hosts would meet the same switch or link again:
  // with nothing to swap out the last rung has nothing to offer.
  if (target.empty()) return;
  const std::vector<std::string> components = {target};
  const int spares = job.isolate(components);
  // The restart starts from an even split: it rebuilds the layout anyway.
  models::WorkSplit even;
  even.layers_per_stage = costs_.layers_per_stage;
  job.apply_work_split(even, 0);
  record({sim::to_seconds(now), "checkpoint-restart", components, spares});
}

}  // namespace gauntlet::harness
