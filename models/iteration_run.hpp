#pragma once
// One simulated iteration as an activity: start() runs its phases one after
// another, each a set of concurrent flows whose completion starts the next,
//   1. plan compute: every rank's busy time from its GPU's speed and its
//      share of the work split,
//   2. the expert-parallel all-to-all (ep > 1),
//   3. the 1F1B pipeline: compute slots (tensor-parallel allreduces over
//      NVLink inside them) and the stage-to-stage transfers,
//   4. the data-parallel ring allreduces,
// and hands the outcome to on_completion when the last ring is done. A
// cancelled run (the job was interrupted) starts no further phase; flows it
// already started finish on the wire.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "models/cluster_state.hpp"
#include "models/collectives/flows.hpp"
#include "models/job_rebalance.hpp"
#include "models/job_spec.hpp"
#include "models/placement.hpp"
#include "models/ring_allreduce.hpp"
#include "sim/network_engine.hpp"
#include "sim/proto/telemetry.pb.h"

namespace gauntlet::models {

// One simulated iteration: its cache keys for fast-forward, its timing and
// the records it produced.
struct IterationOutcome {
  std::uint64_t key_network = 0;
  std::uint64_t key_cluster = 0;
  std::uint64_t key_job = 0;
  // False when traffic of an abandoned iteration was still on the wire: that
  // iteration shared links with it, so its timing is not the steady one.
  bool reusable = true;
  std::uint64_t iteration = 0;
  sim::Nanos start = 0;
  sim::Nanos duration = 0;
  double pace = 1.0;             // the fleet's pace it was simulated at
  std::vector<sim::Nanos> busy;  // per rank: compute time (bubble excluded)
  // Per rank under a work split (empty when even): the micro-batches it
  // ran and its stage's layers (0: the even split's).
  std::vector<std::uint32_t> microbatches, layers;
  std::vector<telemetry::Record> records;  // of the iteration that started at `start`
};

// What an iteration runs on; the references outlive every run that is not
// cancelled.
struct IterationInputs {
  sim::NetworkEngine& engine;
  const JobSpec& spec;
  const Placement& placement;
  const ClusterState& cluster;
  WorkSplit split;
  bool stepwise_rings = false;
  std::shared_ptr<long> in_flight;        // engine flows of the job
  std::function<FlowReuse()> flow_reuse;  // asked as each phase starts its flows
};

class IterationRun : public std::enable_shared_from_this<IterationRun> {
 public:
  using Completion = std::function<void(std::shared_ptr<IterationOutcome>)>;
  IterationRun(IterationInputs inputs, std::shared_ptr<IterationOutcome> outcome, Completion on_completion);

  void start();
  void cancel() { cancelled_ = true; }

 private:
  void plan_compute();
  void start_expert_alltoall();
  void record_alltoall();
  void start_pipeline();
  void record_pipeline_transfers();
  void start_data_parallel();
  void record_ring(std::size_t group, const RingResult& result);
  void complete(sim::Nanos end);

  // Runs `phase` on this run unless it was cancelled meanwhile.
  std::function<void()> then(void (IterationRun::*phase)());
  // The 1F1B span: the slowest replica's under a split, else the job's;
  // `transfer` is a boundary's transfer per micro-batch (per replica under a split).
  sim::Nanos pipeline_span(const std::vector<sim::Nanos>& transfer) const;
  int edge_microbatches(const PipelineEdge& edge) const;
  FlowEnd end_of(int rank) const;

  IterationInputs in_;
  std::shared_ptr<IterationOutcome> o_;
  Completion on_completion_;
  bool cancelled_ = false;

  int microbatches_ = 1;
  sim::Nanos tp_time_ = 0;                             // a micro-batch slot's tensor-parallel allreduces, all slots
  sim::Nanos slot_ = 0;                                // the pipeline's slot under an even split
  std::vector<int> replica_m_;                         // per replica under a split: its micro-batches
  std::vector<sim::Nanos> replica_slot_;               // per replica under a split: its slowest stage's slot
  std::vector<std::vector<sim::Nanos>> alltoall_end_;  // per EP group and member: last byte received
  sim::Nanos pipeline_begin_ = 0;
  std::vector<sim::Nanos> transfer_end_;  // per pipeline flow (forward, backward per edge)
  std::size_t rings_pending_ = 0;
  sim::Nanos rings_end_ = 0;
};

}  // namespace gauntlet::models
