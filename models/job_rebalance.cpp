// Work-split levers: the balancing arithmetic, and the training job's side
// of applying a split (the iteration loop reads it in
// training_job_iteration.cpp).
#include "models/job_rebalance.hpp"

#include <algorithm>
#include <stdexcept>

#include "models/training_job.hpp"

namespace gauntlet::models {
namespace {

// Greedy min-max apportionment: start every bin at one unit and give each
// further unit to the bin whose cost after taking it is lowest.
std::vector<int> apportion(const std::vector<double>& speed, int total, int fixed) {
  const auto n = static_cast<int>(speed.size());
  if (n == 0 || total < n) throw std::invalid_argument("cannot give every part at least one unit");
  for (double s : speed)
    if (!(s > 0)) throw std::invalid_argument("speeds must be positive");
  std::vector<int> units(speed.size(), 1);
  for (int left = total - n; left > 0; --left) {
    std::size_t best = 0;
    double best_cost = 0;
    for (std::size_t i = 0; i < units.size(); ++i) {
      const double cost = (units[i] + 1 + fixed) / speed[i];
      if (i == 0 || cost < best_cost) {
        best = i;
        best_cost = cost;
      }
    }
    ++units[best];
  }
  return units;
}

}  // namespace

double WorkSplit::stage_share(int stage) const {
  if (stage_layers.empty()) return 1.0;
  return static_cast<double>(stage_layers[static_cast<std::size_t>(stage)]) / layers_per_stage;
}

int WorkSplit::replica_microbatches(int replica, int nominal) const {
  return microbatches.empty() ? nominal : microbatches[static_cast<std::size_t>(replica)];
}

std::vector<int> balance_microbatches(const std::vector<double>& replica_speed, int total, int pp) {
  return apportion(replica_speed, total, pp - 1);
}

std::vector<int> balance_layers(const std::vector<double>& stage_speed, int total) {
  return apportion(stage_speed, total, 0);
}

// --- TrainingJob's levers ---

void TrainingJob::apply_work_split(WorkSplit split, sim::Nanos pause) {
  if (!split.microbatches.empty() && static_cast<int>(split.microbatches.size()) != job_.parallelism.dp)
    throw std::invalid_argument("a micro-batch split needs one count per DP replica");
  if (!split.stage_layers.empty() && static_cast<int>(split.stage_layers.size()) != job_.parallelism.pp)
    throw std::invalid_argument("a layer split needs one count per pipeline stage");
  split_ = std::move(split);
  ++compute_version_;
  // A job that is not running picks the split up when it resumes; its
  // restart already re-creates what the lever would pause for.
  if (state_ != JobState::running) return;
  pending_pause_ += pause;
  // The step in flight is abandoned; a checkpoint being written finishes
  // first and its end starts the pause.
  if (current_ || steady_) {
    interrupt();
    begin_iteration();
  }
}

// --- TrainingJob's network levers ---

bool TrainingJob::drain_fabric_link(sim::LinkId link, sim::Nanos pause) {
  if (!engine_.set_fabric_link_drained(link, true)) return false;
  if (state_ != JobState::running) return true;  // a restart rebuilds the communicators anyway
  pending_pause_ += pause;
  if (current_ || steady_) {
    interrupt();
    begin_iteration();
  }
  return true;
}

void TrainingJob::move_nic_traffic(int host, int nic, int to_nic, sim::Nanos pause) {
  const bool running = state_ == JobState::running;
  if (running) pending_pause_ += pause;
  set_nic_fallback(host, nic, to_nic);  // restarts the step in flight when it used the RNIC
  clear_nic_fallback(host, nic);        // no fault keeps it off: a restart goes back to it
  // Every rank joins the rebuilt communicators, whether or not its step
  // touched the RNIC.
  if (running && (current_ || steady_)) {
    interrupt();
    begin_iteration();
  }
}

std::vector<double> TrainingJob::replica_speeds() const {
  std::vector<double> out(static_cast<std::size_t>(job_.parallelism.dp), 1.0);
  for (int r = 0; r < placement_->ranks(); ++r) {
    const RankPlace& p = placement_->rank(r);
    double& slot = out[static_cast<std::size_t>(p.dp)];
    slot = std::min(slot, gpu_speed(p.host, p.gpu));
  }
  return out;
}

std::vector<double> TrainingJob::stage_speeds() const {
  std::vector<double> out(static_cast<std::size_t>(job_.parallelism.pp), 1.0);
  for (int r = 0; r < placement_->ranks(); ++r) {
    const RankPlace& p = placement_->rank(r);
    double& slot = out[static_cast<std::size_t>(p.pp)];
    slot = std::min(slot, gpu_speed(p.host, p.gpu));
  }
  return out;
}

}  // namespace gauntlet::models
