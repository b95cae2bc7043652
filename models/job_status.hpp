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
  waiting,     // crashed, or never placed; waiting for a spare or a repair
};

// Stretches the job could not be placed: fewer usable hosts (its own and
// its spares) than it needs, at the start or at a restart.
struct PlacementShortfall {
  sim::Nanos waited = 0;  // summed over stretches, up to the run's end
  int stretches = 0;
  int most_hosts_short = 0;  // usable hosts missing at the worst moment
};

// Consecutive iterations with the same duration.
struct IterationSpan {
  std::uint64_t first = 0;  // 0-based iteration index
  std::uint64_t count = 0;
  sim::Nanos start = 0;
  sim::Nanos duration = 0;
};

}  // namespace gauntlet::models
