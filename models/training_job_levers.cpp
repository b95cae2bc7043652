// The training job's levers: work splits and re-pairing around a bad
// network component. Each abandons the step in flight and resumes after its
// pause (iteration loop: training_job_iteration.cpp).
#include <algorithm>
#include <stdexcept>

#include "models/training_job.hpp"

namespace gauntlet::models {

void TrainingJob::apply_work_split(WorkSplit split, sim::Nanos pause) {
  if (!split.microbatches.empty() && static_cast<int>(split.microbatches.size()) != job_.parallelism.dp)
    throw std::invalid_argument("a micro-batch split needs one count per DP replica");
  if (!split.stage_layers.empty() && static_cast<int>(split.stage_layers.size()) != job_.parallelism.pp)
    throw std::invalid_argument("a layer split needs one count per pipeline stage");
  split_ = std::move(split);
  ++job_version_;
  // A job that is not running picks the split up when it resumes; its
  // restart already re-creates what the lever would pause for.
  if (state_ != JobState::running) return;
  pending_pause_ += pause;
  // The step in flight is abandoned; a checkpoint being written finishes
  // first and its end starts the pause.
  restart_step();
}

// --- TrainingJob's network levers ---

bool TrainingJob::drain_fabric_link(sim::LinkId link, sim::Nanos pause) {
  if (!engine_.set_fabric_link_drained(link, true)) return false;
  if (state_ != JobState::running) return true;  // a restart rebuilds the communicators anyway
  pending_pause_ += pause;
  restart_step();
  return true;
}

void TrainingJob::move_nic_traffic(int host, int nic, int to_nic, sim::Nanos pause) {
  const bool running = state_ == JobState::running;
  if (running) pending_pause_ += pause;
  set_nic_fallback(host, nic, to_nic);  // restarts the step in flight when it used the RNIC
  clear_nic_fallback(host, nic);        // no fault keeps it off: a restart goes back to it
  // Every rank joins the rebuilt communicators, whether or not its step
  // touched the RNIC.
  if (running) restart_step();
}

}  // namespace gauntlet::models
