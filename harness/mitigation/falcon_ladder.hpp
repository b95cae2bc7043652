#pragma once
// Falcon-style mitigation ladder for fail-slow episodes:
//   0. do nothing (most slowdowns are transient),
//   1. rebalance micro-batches across DP replicas,
//   2. move pipeline layers off the slow stage,
//   3. checkpoint-restart, with the slow host swapped for a spare (not
//      taken when the slowdown sits in the fabric: nothing to swap).
// Ski-rental rule: step k is taken once the slowdown has lasted longer than
// step k's cost and is still there, so a slowdown that ends first costs
// nothing beyond what it lost on its own, and one that persists costs at
// most the levers' pauses on top of what "do nothing" would lose until then.
//
// The episode's clock starts at the first fail-slow / network alert's time
// stamp (the detector's estimate of when it saw the slowdown). The
// job's own measurements decide whether it is still slow: a compute slowdown
// while any replica's slowest GPU runs below nominal; otherwise, with no
// work split active, while iterations take longer than the fastest one seen
// outside episodes. When a compute slowdown ends with a split in place, the
// split is undone (one rebalance pause).
#include <optional>
#include <string>

#include "harness/mitigation/policy.hpp"

namespace gauntlet::harness {

struct LadderCosts {
  // Re-sharding the data loader between iterations: no communicator changes.
  sim::Nanos rebalance = 5 * sim::kSecond;
  // Moving layer weights and optimizer state between stages and rebuilding
  // the pipeline's communicators.
  sim::Nanos relayout = 60 * sim::kSecond;
  // The job's restart_cost (the rollback to the last checkpoint comes on top).
  sim::Nanos restart = 5 * sim::kMinute;
  // Layers per stage under an even split: the granularity of layer moves.
  int layers_per_stage = 8;
};

class FalconLadderPolicy final : public MitigationPolicy {
 public:
  explicit FalconLadderPolicy(LadderCosts costs) : costs_(costs) {}
  void on_alert(const Alert& alert, models::TrainingJob& job, sim::Nanos now) override;
  void on_tick(models::TrainingJob& job, sim::Nanos now) override;

  // The rung reached in the current (or last) episode: 0 = nothing done.
  int rung() const { return rung_; }

 private:
  bool compute_slow(const models::TrainingJob& job) const;
  bool iterations_slow(const models::TrainingJob& job) const;
  sim::Nanos cost(int rung) const;
  void climb(models::TrainingJob& job, sim::Nanos now);
  bool shift_work(models::TrainingJob& job, int rung, sim::Nanos now);
  void restart(models::TrainingJob& job, sim::Nanos now);

  LadderCosts costs_;
  std::optional<sim::Nanos> episode_start_;
  std::string suspect_;   // the alert's top suspect
  int rung_ = 0;          // rungs climbed in this episode (1..3)
  sim::Nanos healthy_ = 0;  // fastest iteration seen outside episodes
};

}  // namespace gauntlet::harness
