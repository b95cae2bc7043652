#pragma once
// Falcon-style mitigation ladder for fail-slow episodes. Levers, cheapest
// first:
//   0. do nothing (most slowdowns are transient),
//   1. rebalance micro-batches across DP replicas            (compute),
//   2. move pipeline layers off the slow stage               (compute),
//   3. re-pair the congested group around the bad component  (communication):
//      a leaf-spine link is drained from ECMP so the job's connections
//      re-hash onto the other spines; an RNIC or its host link has its GPUs
//      moved to another RNIC of the host (NCCL's fallback: nic0 -> nic1,
//      others -> nic0), which then carries both loads; a worker named by a
//      network alert (a slow communicator) stands for the RNIC it sends on.
//      A move is only made when iterations are more than 5% slower than
//      healthy plus the iteration's communication time (what the sibling's
//      doubled load costs at best); at most two re-pairings per episode;
//   4. checkpoint-restart with the suspect's host swapped for a spare (not
//      taken when the suspect sits in the fabric: a restart on the same
//      hosts meets the same link).
//
// Cause. The job's own measurement decides (each GPU's speed as its compute
// times show it, JobMeasurements): while some replica's slowest GPU runs
// below nominal the slowdown is compute and only levers 1, 2 and 4
// apply; otherwise it is communication and only 3 and 4 apply (moving work
// between GPUs does nothing for a lossy link, re-pairing nothing for a slow
// GPU). Lever 3 needs a suspect naming a network component, one untried
// target per step.
//
// Rule (ski-rental on measured loss). The episode starts at the first
// fail-slow or network alert's stamp. While the job is slow, the training
// time it loses accrues at 1 - healthy / current iteration time per second.
// The next applicable lever is taken once the loss accrued since the last
// step (or since the episode started) reaches that lever's cost; accrual
// then starts again from zero, and only once an iteration begun after the
// lever's pause has finished, so the lever's effect is measured before any
// further step: a work split or RNIC move that left iterations no faster
// is undone at once (its pause paid again), and the ladder goes on above
// it. A slowdown that ends first costs nothing beyond what it lost on its
// own; one that persists costs each lever taken at most twice its price
// (once in slowdown, once in the lever itself).
//
// Layer moves balance, for each stage, its slowest replica's pace under the
// micro-batch split in place (every replica shares the layer counts), in
// whole layers of the job's `layers`; an even result is no move.
//
// End. A compute episode ends when no GPU is slow any more; a split then in
// place is undone (one rebalance pause). Any other episode ends when
// iterations are back within 5% of the healthy time (the fastest seen
// outside episodes under an even split). A drained link stays drained and
// moved RNIC traffic stays moved until the next restart.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/mitigation/ladder_calibration.hpp"
#include "harness/mitigation/policy.hpp"

namespace gauntlet::harness {

struct LadderCosts {
  // Re-sharding the data loader between iterations: no communicator changes.
  sim::Nanos rebalance = 5 * sim::kSecond;
  // Moving layer weights and optimizer state between stages and rebuilding
  // the pipeline's communicators.
  sim::Nanos relayout = 60 * sim::kSecond;
  // Rebuilding the job's communicators on new paths (NCCL communicator
  // init at scale takes tens of seconds).
  sim::Nanos repair = 30 * sim::kSecond;
  // The job's restart_cost (the rollback to the last checkpoint comes on top).
  sim::Nanos restart = 5 * sim::kMinute;
};

enum class LadderLever { rebalance, relayout, repair, restart };

class FalconLadderPolicy final : public MitigationPolicy {
 public:
  explicit FalconLadderPolicy(LadderCosts costs, LadderThresholds thresholds = {})
      : costs_(costs), thresholds_(thresholds) {}
  void on_alert(const Alert& alert, models::JobControl& job, sim::Nanos now) override;
  void on_tick(models::JobControl& job, sim::Nanos now) override;
  bool reads_measurements() const override { return true; }

  // Levers taken in the current (or last) episode, in order.
  const std::vector<LadderLever>& taken() const { return taken_; }

 private:
  // What re-pairing would do next: drain a fabric link or move an RNIC.
  struct Repair {
    std::string action;  // "drain-fabric-link" | "move-nic-traffic"
    std::string component;
    int link = -1;                     // drain
    int host = -1, nic = -1, to = -1;  // move
  };

  bool compute_slow(const models::JobControl& job) const;
  bool iterations_slow(const models::JobControl& job) const;
  sim::Nanos cost(LadderLever lever) const;
  bool lever_applies(const models::JobControl& job, LadderLever lever) const;
  std::optional<LadderLever> next_lever(const models::JobControl& job) const;
  void take(models::JobControl& job, LadderLever lever, sim::Nanos now);
  std::optional<models::WorkSplit> planned_split(const models::JobControl& job, LadderLever lever) const;
  static std::vector<double> stage_paces(const models::JobControl& job, const models::WorkSplit& split);
  std::optional<Repair> next_repair(const models::JobControl& job) const;
  bool move_pays(const models::JobControl& job) const;
  std::string restart_target(const models::JobControl& job) const;
  void restart(models::JobControl& job, sim::Nanos now);
  void end_episode(models::JobControl& job, sim::Nanos now);

  LadderCosts costs_;
  LadderThresholds thresholds_;
  std::optional<sim::Nanos> episode_start_;
  std::vector<std::string> suspects_;       // every suspect named in the episode, first seen first
  std::set<std::string> named_by_network_;  // those a network alert named
  std::vector<LadderLever> taken_;
  std::set<std::string> repaired_;  // components re-paired around in this episode
  // The last lever, until its effect is measured: what undoes it.
  struct Undo {
    LadderLever lever;
    models::WorkSplit split;  // the split before it
    Repair repair;            // an RNIC move
    sim::Nanos before = 0;    // the iteration time before it
  };
  std::optional<Undo> undo_;
  double loss_s_ = 0;            // training time lost since the last step
  sim::Nanos measure_from_ = 0;  // iterations begun before this predate the last step
  sim::Nanos last_tick_ = 0;
  sim::Nanos healthy_ = 0;  // fastest iteration seen outside episodes
};

}  // namespace gauntlet::harness
