#pragma once
// Work-split levers a running job can pull without a restart, the middle
// rungs of Falcon's mitigation ladder:
//   - micro-batch rebalancing: the global batch (dp x microbatches) stays
//     fixed, but a data-parallel replica with a slow GPU gets fewer
//     micro-batches and the others more, so the replicas reach the gradient
//     allreduce at about the same time;
//   - layer moves: a pipeline stage holding a slow GPU keeps fewer layers and
//     its neighbours more, so the stages' per-micro-batch slots even out.
// Both only redistribute work: per-replica speeds s_i bound the balanced
// compute time from below by total work / sum(s_i), and the integer
// granularity (whole micro-batches, whole layers) keeps it above that bound.
#include <vector>

#include "sim/time.hpp"

namespace gauntlet::models {

struct WorkSplit {
  std::vector<int> microbatches;  // per DP replica (index = dp coordinate); empty: the spec's count each
  std::vector<int> stage_layers;  // per pipeline stage; empty: an even split
  int layers_per_stage = 1;       // a stage's layers under the even split

  bool even() const { return microbatches.empty() && stage_layers.empty(); }
  // A stage's share of the work relative to the even split (1.0 when even).
  double stage_share(int stage) const;
  int replica_microbatches(int replica, int nominal) const;
};

// Micro-batches per replica minimizing the slowest replica's pipeline span
// (m_i + pp - 1) / speed_i with sum m_i = total and every m_i >= 1. Handing
// out micro-batches one at a time to the replica that would finish first is
// optimal for this min-max; ties go to the lower index (deterministic).
std::vector<int> balance_microbatches(const std::vector<double>& replica_speed, int total, int pp);

// Layers per stage minimizing max layers_k / speed_k with sum = total and
// every stage keeping at least one layer (same greedy argument).
std::vector<int> balance_layers(const std::vector<double>& stage_speed, int total);

}  // namespace gauntlet::models
