#include "models/iteration_run.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "models/collectives/pipeline.hpp"
#include "models/collective_record.hpp"

namespace gauntlet::models {

IterationRun::IterationRun(IterationInputs inputs, std::shared_ptr<IterationOutcome> outcome, Completion on_completion)
    : in_(std::move(inputs)), o_(std::move(outcome)), on_completion_(std::move(on_completion)) {}

std::function<void()> IterationRun::then(void (IterationRun::*phase)()) {
  return [self = shared_from_this(), phase] {
    if (!self->cancelled_) ((*self).*phase)();
  };
}

FlowEnd IterationRun::end_of(int rank) const {
  const RankPlace& p = in_.placement.rank(rank);
  return {p.host, in_.cluster.traffic_endpoint(p.endpoint)};
}

void IterationRun::start() {
  plan_compute();
  start_expert_alltoall();
}

// compute_per_iteration is the pipeline's compute phase, bubble included:
// (m + pp - 1) slots, of which each rank is busy for m.
void IterationRun::plan_compute() {
  const JobSpec& spec = in_.spec;
  const Placement& placement = in_.placement;
  const int ranks = placement.ranks();
  const int pp = spec.parallelism.pp, m = std::max(1, spec.microbatches);
  microbatches_ = m;
  const double slot0 = static_cast<double>(spec.compute_per_iteration) / (m + pp - 1);
  double slowest = 1.0;
  o_->busy.resize(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    const double speed = in_.cluster.gpu_speed(placement.rank(r).host, placement.rank(r).gpu);
    slowest = std::min(slowest, speed);
    o_->busy[static_cast<std::size_t>(r)] = static_cast<sim::Nanos>(std::llround(slot0 * m / speed));
  }
  // Tensor-parallel allreduces run over NVLink inside each micro-batch slot.
  const int tp = spec.parallelism.tp;
  tp_time_ = tp > 1 && spec.tp_bytes > 0
                 ? static_cast<sim::Nanos>(std::llround(ring_edge_bytes(static_cast<double>(spec.tp_bytes), tp) /
                                                        kNvlinkBytesPerSecond * 1e9)) +
                       2 * (tp - 1) * kNvlinkStepLatency
                 : 0;
  slot_ = static_cast<sim::Nanos>(std::llround(slot0 / std::min(1.0, slowest))) + tp_time_ / m;
  if (in_.split.even()) return;
  // Under a work split each replica runs its own micro-batch count at the
  // pace of its slowest stage (layers per stage scale a stage's slot).
  const int dp = spec.parallelism.dp;
  replica_m_.resize(static_cast<std::size_t>(dp));
  replica_slot_.assign(static_cast<std::size_t>(dp), 0);
  for (int i = 0; i < dp; ++i) replica_m_[static_cast<std::size_t>(i)] = in_.split.replica_microbatches(i, m);
  o_->microbatches.resize(static_cast<std::size_t>(ranks));
  o_->layers.assign(static_cast<std::size_t>(ranks), 0);
  for (int r = 0; r < ranks; ++r) {
    const RankPlace& p = placement.rank(r);
    const double speed = std::min(1.0, in_.cluster.gpu_speed(p.host, p.gpu));
    const double per_microbatch = slot0 * in_.split.stage_share(p.pp) / speed;
    const int mi = replica_m_[static_cast<std::size_t>(p.dp)];
    o_->microbatches[static_cast<std::size_t>(r)] = static_cast<std::uint32_t>(mi);
    if (!in_.split.stage_layers.empty())
      o_->layers[static_cast<std::size_t>(r)] =
          static_cast<std::uint32_t>(in_.split.stage_layers[static_cast<std::size_t>(p.pp)]);
    o_->busy[static_cast<std::size_t>(r)] = static_cast<sim::Nanos>(std::llround(per_microbatch * mi));
    auto& rs = replica_slot_[static_cast<std::size_t>(p.dp)];
    rs = std::max(rs, static_cast<sim::Nanos>(std::llround(per_microbatch)) + tp_time_ / m);
  }
}

sim::Nanos IterationRun::pipeline_span(const std::vector<sim::Nanos>& transfer) const {
  const int pp = in_.spec.parallelism.pp;
  if (replica_m_.empty()) return one_f_one_b_duration(slot_, transfer.empty() ? 0 : transfer[0], pp, microbatches_);
  sim::Nanos span = 0;
  for (std::size_t i = 0; i < replica_m_.size(); ++i)
    span =
        std::max(span, one_f_one_b_duration(replica_slot_[i], transfer.empty() ? 0 : transfer[i], pp, replica_m_[i]));
  return span;
}

int IterationRun::edge_microbatches(const PipelineEdge& edge) const {
  return replica_m_.empty() ? microbatches_ : replica_m_[static_cast<std::size_t>(in_.placement.rank(edge.sender).dp)];
}

void IterationRun::start_expert_alltoall() {
  const auto& groups = in_.placement.ep_groups();
  if (groups.empty() || in_.spec.alltoall_bytes == 0) {
    start_pipeline();
    return;
  }
  std::vector<Flow> flows;
  std::vector<std::pair<std::size_t, std::size_t>> receiver;  // (group, position) per flow
  const double share = static_cast<double>(in_.spec.alltoall_bytes) / in_.spec.parallelism.ep;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& members = groups[g].ranks;
    for (std::size_t i = 0; i < members.size(); ++i)
      for (std::size_t j = 0; j < members.size(); ++j)
        if (i != j) {
          flows.push_back({end_of(members[i]), end_of(members[j]), share});
          receiver.push_back({g, j});
        }
  }
  alltoall_end_.resize(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) alltoall_end_[g].assign(groups[g].ranks.size(), o_->start);
  auto self = shared_from_this();
  start_flows(
      in_.engine, flows, in_.spec.channels,
      [self, receiver](std::size_t i, sim::Nanos at) {
        auto& end = self->alltoall_end_[receiver[i].first][receiver[i].second];
        end = std::max(end, at);
      },
      then(&IterationRun::record_alltoall), in_.in_flight, in_.flow_reuse());
}

void IterationRun::record_alltoall() {
  const auto& groups = in_.placement.ep_groups();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& members = groups[g].ranks;
    for (std::size_t i = 0; i < members.size(); ++i)
      o_->records.push_back(collective_record(groups[g].communicator, static_cast<int>(i),
                                              in_.placement.worker_name(members[i]), "alltoall", "direct",
                                              in_.spec.alltoall_bytes, o_->iteration, o_->start, alltoall_end_[g][i],
                                              in_.placement.worker_name(members[(i + 1) % members.size()])));
  }
  start_pipeline();
}

// Each boundary carries its replica's micro-batches of activations forward
// and as many gradients back over the iteration; all boundaries at once.
void IterationRun::start_pipeline() {
  const JobSpec& spec = in_.spec;
  const Placement& placement = in_.placement;
  pipeline_begin_ = in_.engine.now();
  const sim::Nanos begin = pipeline_begin_;
  for (const DpGroup& group : placement.tp_groups()) {
    if (tp_time_ == 0) break;
    for (std::size_t k = 0; k < group.ranks.size(); ++k)
      o_->records.push_back(collective_record(group.communicator, static_cast<int>(k),
                                              placement.worker_name(group.ranks[k]), "allreduce", "ring", spec.tp_bytes,
                                              o_->iteration, begin, begin + tp_time_,
                                              placement.worker_name(group.ranks[(k + 1) % group.ranks.size()])));
  }
  const auto& edges = placement.pipeline_edges();
  if (spec.parallelism.pp <= 1 || edges.empty() || spec.activation_bytes == 0) {
    in_.engine.schedule_at(begin + pipeline_span({}), then(&IterationRun::start_data_parallel));
    return;
  }
  std::vector<Flow> flows;
  for (const PipelineEdge& e : edges) {
    const double edge_bytes = static_cast<double>(spec.activation_bytes) * edge_microbatches(e);
    flows.push_back({end_of(e.sender), end_of(e.receiver), edge_bytes});
    flows.push_back({end_of(e.receiver), end_of(e.sender), edge_bytes});
  }
  transfer_end_.assign(flows.size(), begin);
  auto self = shared_from_this();
  start_flows(
      in_.engine, flows, spec.channels, [self](std::size_t i, sim::Nanos at) { self->transfer_end_[i] = at; },
      then(&IterationRun::record_pipeline_transfers), in_.in_flight, in_.flow_reuse());
}

void IterationRun::record_pipeline_transfers() {
  const JobSpec& spec = in_.spec;
  const Placement& placement = in_.placement;
  const sim::Nanos begin = pipeline_begin_;
  const int m = microbatches_;
  const auto& edges = placement.pipeline_edges();
  sim::Nanos slowest = 0;
  std::vector<sim::Nanos> replica_slowest(replica_m_.size(), 0);
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const PipelineEdge& e = edges[i];
    const sim::Nanos fwd = transfer_end_[2 * i], bwd = transfer_end_[2 * i + 1];
    slowest = std::max({slowest, fwd - begin, bwd - begin});
    if (!replica_m_.empty()) {
      auto& rs = replica_slowest[static_cast<std::size_t>(placement.rank(e.sender).dp)];
      rs = std::max({rs, fwd - begin, bwd - begin});
    }
    const auto b = static_cast<std::uint64_t>(replica_m_.empty() ? static_cast<double>(spec.activation_bytes) * m
                                                                 : spec.activation_bytes * edge_microbatches(e));
    const std::string sender = placement.worker_name(e.sender), receiver = placement.worker_name(e.receiver);
    o_->records.push_back(
        collective_record(e.communicator, e.stage, sender, "send", "p2p", b, o_->iteration, begin, fwd, receiver));
    o_->records.push_back(
        collective_record(e.communicator, e.stage + 1, receiver, "recv", "p2p", b, o_->iteration, begin, fwd, sender));
    o_->records.push_back(
        collective_record(e.communicator, e.stage + 1, receiver, "send", "p2p", b, o_->iteration, begin, bwd, sender));
    o_->records.push_back(
        collective_record(e.communicator, e.stage, sender, "recv", "p2p", b, o_->iteration, begin, bwd, receiver));
  }
  // A boundary's transfer per micro-batch paces the pipeline.
  std::vector<sim::Nanos> per_microbatch = {(slowest + m - 1) / m};
  if (!replica_m_.empty()) {
    per_microbatch.resize(replica_m_.size());
    for (std::size_t i = 0; i < replica_m_.size(); ++i)
      per_microbatch[i] = (replica_slowest[i] + replica_m_[i] - 1) / replica_m_[i];
  }
  in_.engine.schedule_at(std::max(in_.engine.now(), begin + pipeline_span(per_microbatch)),
                         then(&IterationRun::start_data_parallel));
}

void IterationRun::start_data_parallel() {
  const auto& groups = in_.placement.dp_groups();
  if (in_.spec.parallelism.dp <= 1 || groups.empty()) {
    complete(in_.engine.now());
    return;
  }
  rings_pending_ = groups.size();
  rings_end_ = in_.engine.now();
  std::vector<std::vector<FlowEnd>> rings(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (int r : groups[g].ranks) rings[g].push_back(end_of(r));
  auto self = shared_from_this();
  auto ring_done = [self](std::size_t g, const RingResult& result) {
    if (!self->cancelled_) self->record_ring(g, result);
  };
  const auto bytes = static_cast<double>(in_.spec.gradient_bytes);
  if (in_.stepwise_rings) {
    for (std::size_t g = 0; g < rings.size(); ++g)
      start_ring_stepwise(in_.engine, rings[g], RingOp::allreduce, bytes, in_.spec.channels,
                          [ring_done, g](const RingResult& result) { ring_done(g, result); });
    return;
  }
  start_rings(in_.engine, rings, RingOp::allreduce, bytes, in_.spec.channels, ring_done, in_.in_flight,
              in_.flow_reuse());
}

// Each rank enters the allreduce when its own compute is done and waits
// there for the last one: the ring moves only once everyone is in.
void IterationRun::record_ring(std::size_t g, const RingResult& result) {
  const DpGroup& group = in_.placement.dp_groups()[g];
  const std::size_t n = group.ranks.size();
  const sim::Nanos slowest_busy = *std::max_element(o_->busy.begin(), o_->busy.end());
  for (std::size_t pos = 0; pos < n; ++pos) {
    const sim::Nanos idle = slowest_busy - o_->busy[static_cast<std::size_t>(group.ranks[pos])];
    const sim::Nanos entry = std::max(o_->start, result.start - idle);
    o_->records.push_back(collective_record(group.communicator, static_cast<int>(pos),
                                            in_.placement.worker_name(group.ranks[pos]), "allreduce", "ring",
                                            in_.spec.gradient_bytes, o_->iteration, entry, result.rank_end[pos],
                                            in_.placement.worker_name(group.ranks[(pos + 1) % n])));
  }
  rings_end_ = std::max(rings_end_, result.end);
  if (--rings_pending_ > 0) return;
  complete(rings_end_);
}

void IterationRun::complete(sim::Nanos end) {
  o_->duration = end - o_->start;
  on_completion_(o_);
}

}  // namespace gauntlet::models
