#pragma once
// The 1F1B pipeline schedule's critical path, in closed form.
//
// With pp stages and m micro-batches, each stage spends one slot s per
// micro-batch (its forward plus backward); the first stage starts the last
// backward only after the pipeline filled and drained, so the schedule spans
// (m + pp - 1) slots of which pp - 1 are bubble: the bubble is
// (pp - 1) / (m + pp - 1) of the compute phase. Sending one micro-batch's
// activations to the next stage takes t: while t <= s the steady state hides
// it under compute and only the fill and the drain expose it (2 (pp - 1)
// transfers on the critical path); once t > s the links set the pace:
//   T = (m + pp - 1) * max(s, t) + 2 (pp - 1) * t.
#include <algorithm>

#include "sim/time.hpp"

namespace gauntlet::models {

inline sim::Nanos one_f_one_b_duration(sim::Nanos slot, sim::Nanos transfer, int pp, int microbatches) {
  const sim::Nanos slots = microbatches + pp - 1;
  return slots * std::max(slot, transfer) + 2 * (pp - 1) * transfer;
}

inline double pipeline_bubble(int pp, int microbatches) {
  return static_cast<double>(pp - 1) / (microbatches + pp - 1);
}

}  // namespace gauntlet::models
