#include "models/progress_ledger.hpp"

#include <string>

#include "sim/contract.hpp"

namespace gauntlet::models {

void ProgressLedger::complete(sim::Nanos start, sim::Nanos duration, std::uint64_t count) {
  GAUNTLET_INVARIANT(count > 0 && duration >= 0, "iterations " + std::to_string(count));
  progress_ += count;
  executed_ += count;
  GAUNTLET_INVARIANT(progress_ <= executed_);
  if (!timeline_.empty()) {
    IterationSpan& back = timeline_.back();
    // A job runs one iteration at a time: the timeline never runs back.
    GAUNTLET_INVARIANT(start >= back.start + static_cast<sim::Nanos>(back.count) * back.duration,
                       "iteration " + std::to_string(progress_ - count) + " starts at " + std::to_string(start) +
                           ", before the one before it ended");
    if (back.duration == duration && back.start + static_cast<sim::Nanos>(back.count) * back.duration == start) {
      back.count += count;
      return;
    }
  }
  const std::uint64_t first = timeline_.empty() ? 0 : timeline_.back().first + timeline_.back().count;
  timeline_.push_back({first, count, start, duration});
}

void ProgressLedger::commit_checkpoint(std::uint64_t progress) {
  // A checkpoint holds iterations done, and never fewer than the one before
  // it (a roll back returns to that one).
  GAUNTLET_INVARIANT(progress >= checkpoint_progress_ && progress <= progress_,
                     "checkpoint at " + std::to_string(progress) + ", the last at " +
                         std::to_string(checkpoint_progress_) + ", progress " + std::to_string(progress_));
  checkpoint_progress_ = progress;
}

void ProgressLedger::roll_back() {
  GAUNTLET_INVARIANT(checkpoint_progress_ <= progress_, "a checkpoint holds only iterations done");
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
  GAUNTLET_INVARIANT(progress_ <= executed_);
  // The timeline holds exactly the iterations that count.
  GAUNTLET_INVARIANT(timeline_.empty() ? progress_ == 0 : timeline_.back().first + timeline_.back().count == progress_,
                     "progress " + std::to_string(progress_));
}

}  // namespace gauntlet::models
