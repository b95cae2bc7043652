#include "models/progress_ledger.hpp"

#include "sim/contract.hpp"

namespace gauntlet::models {

void ProgressLedger::complete(sim::Nanos start, sim::Nanos duration, std::uint64_t count) {
  progress_ += count;
  executed_ += count;
  GAUNTLET_INVARIANT(progress_ <= executed_);
  if (!timeline_.empty()) {
    IterationSpan& back = timeline_.back();
    if (back.duration == duration && back.start + static_cast<sim::Nanos>(back.count) * back.duration == start) {
      back.count += count;
      return;
    }
  }
  const std::uint64_t first = timeline_.empty() ? 0 : timeline_.back().first + timeline_.back().count;
  timeline_.push_back({first, count, start, duration});
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
}

}  // namespace gauntlet::models
