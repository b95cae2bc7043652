#pragma once
// What anyone may see of a job's progress: its state and the timeline of the
// iterations that count.
#include <cstdint>

#include "sim/time.hpp"

namespace gauntlet::models {

enum class JobState {
  idle,        // not started
  running,     // iterating or writing a checkpoint
  hung,        // a collective waits for a rank that will never come
  restarting,  // hardware available; resuming after restart_cost
  waiting,     // crashed; waiting for a spare or a repair
};

// Consecutive iterations with the same duration.
struct IterationSpan {
  std::uint64_t first = 0;  // 0-based iteration index
  std::uint64_t count = 0;
  sim::Nanos start = 0;
  sim::Nanos duration = 0;
};

}  // namespace gauntlet::models
