#pragma once
// A job's progress: the iterations that count (each index once) and their
// timeline, against the iterations executed. A restart rolls back to the
// last committed checkpoint; what it removes from the timeline is lost work,
// counted apart so redone iterations never count twice.
#include <cstdint>
#include <vector>

#include "models/job_status.hpp"
#include "sim/time.hpp"

namespace gauntlet::models {

class ProgressLedger {
 public:
  // `count` iterations of `duration` each, the first starting at `start`.
  void complete(sim::Nanos start, sim::Nanos duration, std::uint64_t count);
  // A checkpoint holding the first `progress` iterations was committed.
  void commit_checkpoint(std::uint64_t progress);
  // Back to the last committed checkpoint.
  void roll_back();

  const std::vector<IterationSpan>& timeline() const { return timeline_; }
  std::uint64_t progress() const { return progress_; }  // the next iteration's index
  std::uint64_t executed() const { return executed_; }
  sim::Nanos lost_time() const { return lost_time_; }

 private:
  std::vector<IterationSpan> timeline_;
  std::uint64_t progress_ = 0;
  std::uint64_t executed_ = 0;
  std::uint64_t checkpoint_progress_ = 0;
  sim::Nanos lost_time_ = 0;
};

}  // namespace gauntlet::models
