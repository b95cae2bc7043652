// The iteration loop: the three phases of a step as concurrent flows, the
// records they produce, and steady-state fast-forward.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>

#include "models/collectives/pipeline.hpp"
#include "models/ring_allreduce.hpp"
#include "models/training_job.hpp"
#include "models/training_job_outcome.hpp"

namespace gauntlet::models {
namespace {

constexpr sim::Nanos kForever = std::numeric_limits<sim::Nanos>::max();

// Rewrites a copy of one iteration's records as those of iteration
// `iteration` starting `shift` later.
void shift_record(telemetry::Record& record, sim::Nanos shift, std::uint64_t iteration) {
  if (record.has_iteration()) {
    auto* it = record.mutable_iteration();
    it->set_iteration(iteration);
    it->set_start_ns(it->start_ns() + shift);
    it->set_end_ns(it->end_ns() + shift);
  } else if (record.has_collective()) {
    auto* c = record.mutable_collective();
    c->set_sequence(iteration);
    c->set_start_ns(c->start_ns() + shift);
    if (c->end_ns() != 0) c->set_end_ns(c->end_ns() + shift);
  }
}

telemetry::Record collective(const std::string& communicator, int rank, const std::string& worker,
                             std::string_view op, std::string_view algorithm, std::uint64_t bytes,
                             std::uint64_t sequence, sim::Nanos start, sim::Nanos end, const std::string& peer) {
  telemetry::Record record;
  auto* c = record.mutable_collective();
  c->set_communicator(communicator);
  c->set_rank(static_cast<std::uint32_t>(rank));
  c->set_worker(worker);
  c->set_op(std::string(op));
  c->set_algorithm(std::string(algorithm));
  c->set_bytes(bytes);
  c->set_sequence(sequence);
  c->set_start_ns(start);
  c->set_end_ns(end);
  c->set_peer(peer);
  return record;
}

}  // namespace

void TrainingJob::begin_iteration() {
  if (state_ != JobState::running || engine_.now() >= horizon_) return;
  if (hold_requested_) {
    if (parked_) return;
    parked_ = true;
    if (auto held = std::exchange(on_held_, {})) engine_.schedule_at(engine_.now(), std::move(held));
    return;
  }
  if (pending_pause_ > 0) {  // a work-split lever's pause
    const sim::Nanos pause = std::exchange(pending_pause_, 0);
    const std::uint64_t epoch = epoch_;
    engine_.schedule_at(engine_.now() + pause, [this, epoch] {
      if (epoch == epoch_) begin_iteration();
    });
    return;
  }
  if (fast_forward_ && try_fast_forward()) return;
  simulate_iteration();
}

bool TrainingJob::try_fast_forward() {
  if (!last_ || last_->key_network != engine_.state_version() || last_->key_compute != compute_version_ ||
      last_->key_layout != layout_version_ || *in_flight_ != 0)
    return false;
  const sim::Nanos now = engine_.now();
  sim::Nanos limit = horizon_;
  if (next_change_) limit = std::min(limit, next_change_());
  const sim::Nanos duration = last_->duration;
  if (duration <= 0 || limit - now < duration) return false;
  auto count = static_cast<std::uint64_t>((limit - now) / duration);
  // A stretch lasts at most as long as the steady state before it (1, 2, 4,
  // ... iterations after a change): telemetry of a new state is published
  // within about as long as it has lasted, for a few more stretches per change.
  count = std::min(count, executed_ - executed_at_simulation_ + 1);
  if (job_.checkpoint_interval > 0) {
    // Stop at the first iteration boundary at or after the checkpoint's due
    // time, exactly where a step-by-step run writes it.
    const sim::Nanos until_due = std::max<sim::Nanos>(checkpoint_due() - now, 1);
    count = std::min(count, static_cast<std::uint64_t>((until_due + duration - 1) / duration));
  }
  steady_ = Steady{progress_, count, now, duration};
  const std::uint64_t epoch = epoch_, generation = ++steady_generation_;
  engine_.schedule_at(now + static_cast<sim::Nanos>(count) * duration, [this, epoch, generation, count] {
    if (epoch != epoch_ || generation != steady_generation_) return;
    end_steady_run(count);
    after_iteration();
  });
  return true;
}

void TrainingJob::cut_steady_run() {
  if (!steady_) return;
  const Steady run = *steady_;
  const sim::Nanos elapsed = engine_.now() - run.start;
  const auto done = static_cast<std::uint64_t>((elapsed + run.duration - 1) / run.duration);
  if (done >= run.count) return;
  const std::uint64_t epoch = epoch_, generation = ++steady_generation_;
  engine_.schedule_at(run.start + static_cast<sim::Nanos>(done) * run.duration, [this, epoch, generation, done] {
    if (epoch != epoch_ || generation != steady_generation_) return;
    end_steady_run(done);
    after_iteration();
  });
}

void TrainingJob::end_steady_run(std::uint64_t count) {
  const Steady run = *steady_;
  steady_.reset();
  if (count == 0) return;
  // Written in place: a large job's iteration has tens of thousands of records.
  bus_.publish_steady_in_place([&](telemetry::SteadyRun& steady) {
    steady.set_first_iteration(run.first);
    steady.set_last_iteration(run.first + count - 1);
    steady.set_period_ns(run.duration);
    steady.mutable_records()->Reserve(static_cast<int>(last_->records.size()));
    for (const telemetry::Record& record : last_->records) {
      telemetry::Record* copy = steady.add_records();
      *copy = record;
      shift_record(*copy, run.start - last_->start, run.first);
    }
  });
  record_span(run.start, run.duration, count);
  progress_ += count;
  executed_ += count;
}

void TrainingJob::simulate_iteration() {
  const sim::Nanos start = engine_.now();
  const int ranks = placement_->ranks();
  const int pp = job_.parallelism.pp, m = std::max(1, job_.microbatches);
  ++simulated_iterations_;
  auto o = std::make_shared<Outcome>();
  o->key_network = engine_.state_version();
  o->key_compute = compute_version_;
  o->key_layout = layout_version_;
  o->reusable = *in_flight_ == 0;
  o->iteration = progress_;
  o->start = start;
  current_ = o;
  const std::uint64_t epoch = epoch_;

  // Compute: compute_per_iteration is the pipeline's compute phase, bubble
  // included: (m + pp - 1) slots, of which each rank is busy for m.
  const double slot0 = static_cast<double>(job_.compute_per_iteration) / (m + pp - 1);
  double slowest = 1.0;
  o->busy.resize(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    const double speed = gpu_speed(placement_->rank(r).host, placement_->rank(r).gpu);
    slowest = std::min(slowest, speed);
    o->busy[static_cast<std::size_t>(r)] = static_cast<sim::Nanos>(std::llround(slot0 * m / speed));
  }
  // Tensor-parallel allreduces run over NVLink inside each micro-batch slot.
  const int tp = job_.parallelism.tp;
  const sim::Nanos tp_time =
      tp > 1 && job_.tp_bytes > 0
          ? static_cast<sim::Nanos>(std::llround(ring_edge_bytes(static_cast<double>(job_.tp_bytes), tp) /
                                                 kNvlinkBytesPerSecond * 1e9)) +
                2 * (tp - 1) * kNvlinkStepLatency
          : 0;
  const sim::Nanos slot = static_cast<sim::Nanos>(std::llround(slot0 / std::min(1.0, slowest))) + tp_time / m;
  // Under a work split each replica runs its own micro-batch count at the
  // pace of its slowest stage (layers per stage scale a stage's slot).
  std::vector<int> replica_m;
  std::vector<sim::Nanos> replica_slot;
  if (!split_.even()) {
    const int dp = job_.parallelism.dp;
    replica_m.resize(static_cast<std::size_t>(dp));
    replica_slot.assign(static_cast<std::size_t>(dp), 0);
    for (int i = 0; i < dp; ++i) replica_m[static_cast<std::size_t>(i)] = split_.replica_microbatches(i, m);
    for (int r = 0; r < ranks; ++r) {
      const RankPlace& p = placement_->rank(r);
      const double speed = std::min(1.0, gpu_speed(p.host, p.gpu));
      const double per_microbatch = slot0 * split_.stage_share(p.pp) / speed;
      const int mi = replica_m[static_cast<std::size_t>(p.dp)];
      o->busy[static_cast<std::size_t>(r)] = static_cast<sim::Nanos>(std::llround(per_microbatch * mi));
      auto& rs = replica_slot[static_cast<std::size_t>(p.dp)];
      rs = std::max(rs, static_cast<sim::Nanos>(std::llround(per_microbatch)) + tp_time / m);
    }
  }
  // The 1F1B span: the slowest replica's under a split, else the job's.
  auto pipeline_span = [replica_m, replica_slot, slot, pp, m](const std::vector<sim::Nanos>& transfer) {
    if (replica_m.empty()) return one_f_one_b_duration(slot, transfer.empty() ? 0 : transfer[0], pp, m);
    sim::Nanos span = 0;
    for (std::size_t i = 0; i < replica_m.size(); ++i)
      span = std::max(span, one_f_one_b_duration(replica_slot[i], transfer.empty() ? 0 : transfer[i], pp,
                                                 replica_m[i]));
    return span;
  };

  auto end_of = [this](int r) { return FlowEnd{placement_->rank(r).host, rank_endpoint(r)}; };
  auto name = [this](int r) { return placement_->worker_name(r); };

  // Phase 3: the data-parallel ring allreduces, then the iteration's end.
  auto data_parallel = [this, o, epoch, end_of, name]() {
    if (epoch != epoch_) return;
    const auto& groups = placement_->dp_groups();
    if (job_.parallelism.dp <= 1 || groups.empty()) {
      o->duration = engine_.now() - o->start;
      finish_iteration(o);
      return;
    }
    auto pending = std::make_shared<std::size_t>(groups.size());
    auto end = std::make_shared<sim::Nanos>(engine_.now());
    std::vector<std::vector<FlowEnd>> rings(groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g)
      for (int r : groups[g].ranks) rings[g].push_back(end_of(r));
    auto ring_done = [this, o, epoch, pending, end, name](std::size_t g, const RingResult& result) {
            if (epoch != epoch_) return;
            const DpGroup& group = placement_->dp_groups()[g];
            const std::size_t n = group.ranks.size();
            // Each rank enters when its own compute is done and waits there
            // for the last one: the ring moves only once everyone is in.
            const sim::Nanos slowest_busy = *std::max_element(o->busy.begin(), o->busy.end());
            for (std::size_t pos = 0; pos < n; ++pos) {
              const sim::Nanos idle = slowest_busy - o->busy[static_cast<std::size_t>(group.ranks[pos])];
              const sim::Nanos entry = std::max(o->start, result.start - idle);
              o->records.push_back(collective(group.communicator, static_cast<int>(pos), name(group.ranks[pos]),
                                              "allreduce", "ring", job_.gradient_bytes, o->iteration, entry,
                                              result.rank_end[pos], name(group.ranks[(pos + 1) % n])));
            }
            *end = std::max(*end, result.end);
            if (--*pending > 0) return;
            o->duration = *end - o->start;
            finish_iteration(o);
    };
    const auto bytes = static_cast<double>(job_.gradient_bytes);
    if (stepwise_rings_) {
      for (std::size_t g = 0; g < rings.size(); ++g)
        start_ring_stepwise(engine_, rings[g], RingOp::allreduce, bytes, job_.channels,
                            [ring_done, g](const RingResult& result) { ring_done(g, result); });
      return;
    }
    start_rings(engine_, rings, RingOp::allreduce, bytes, job_.channels, ring_done, in_flight_, flow_reuse());
  };

  // Phase 2: the 1F1B pipeline with its stage-to-stage transfers.
  auto pipeline = [this, o, epoch, tp_time, pp, m, end_of, name, data_parallel, replica_m, pipeline_span]() {
    if (epoch != epoch_) return;
    const sim::Nanos begin = engine_.now();
    for (const DpGroup& group : placement_->tp_groups()) {
      if (tp_time == 0) break;
      for (std::size_t k = 0; k < group.ranks.size(); ++k)
        o->records.push_back(collective(group.communicator, static_cast<int>(k), name(group.ranks[k]), "allreduce",
                                        "ring", job_.tp_bytes, o->iteration, begin, begin + tp_time,
                                        name(group.ranks[(k + 1) % group.ranks.size()])));
    }
    const auto& edges = placement_->pipeline_edges();
    if (pp <= 1 || edges.empty() || job_.activation_bytes == 0) {
      engine_.schedule_at(begin + pipeline_span({}), data_parallel);
      return;
    }
    // Each boundary carries m micro-batches of activations forward and as
    // many gradients back over the iteration; all boundaries at once.
    auto edge_m = [this, replica_m, m](const PipelineEdge& e) {
      return replica_m.empty() ? m : replica_m[static_cast<std::size_t>(placement_->rank(e.sender).dp)];
    };
    const double bytes = static_cast<double>(job_.activation_bytes) * m;
    std::vector<Flow> flows;
    for (const PipelineEdge& e : edges) {
      const double edge_bytes = static_cast<double>(job_.activation_bytes) * edge_m(e);
      flows.push_back({end_of(e.sender), end_of(e.receiver), edge_bytes});
      flows.push_back({end_of(e.receiver), end_of(e.sender), edge_bytes});
    }
    auto ends = std::make_shared<std::vector<sim::Nanos>>(flows.size(), begin);
    start_flows(
        engine_, flows, job_.channels, [ends](std::size_t i, sim::Nanos at) { (*ends)[i] = at; },
        [this, o, epoch, begin, ends, name, data_parallel, bytes, replica_m, pipeline_span, edge_m, m] {
          if (epoch != epoch_) return;
          const auto& edges = placement_->pipeline_edges();
          sim::Nanos slowest = 0;
          std::vector<sim::Nanos> replica_slowest(replica_m.size(), 0);
          for (std::size_t i = 0; i < edges.size(); ++i) {
            const PipelineEdge& e = edges[i];
            const sim::Nanos fwd = (*ends)[2 * i], bwd = (*ends)[2 * i + 1];
            slowest = std::max({slowest, fwd - begin, bwd - begin});
            if (!replica_m.empty()) {
              auto& rs = replica_slowest[static_cast<std::size_t>(placement_->rank(e.sender).dp)];
              rs = std::max({rs, fwd - begin, bwd - begin});
            }
            const auto b = static_cast<std::uint64_t>(replica_m.empty() ? bytes : job_.activation_bytes * edge_m(e));
            o->records.push_back(collective(e.communicator, e.stage, name(e.sender), "send", "p2p", b, o->iteration,
                                            begin, fwd, name(e.receiver)));
            o->records.push_back(collective(e.communicator, e.stage + 1, name(e.receiver), "recv", "p2p", b,
                                            o->iteration, begin, fwd, name(e.sender)));
            o->records.push_back(collective(e.communicator, e.stage + 1, name(e.receiver), "send", "p2p", b,
                                            o->iteration, begin, bwd, name(e.sender)));
            o->records.push_back(collective(e.communicator, e.stage, name(e.sender), "recv", "p2p", b, o->iteration,
                                            begin, bwd, name(e.receiver)));
          }
          // A boundary's transfer per micro-batch paces the pipeline.
          std::vector<sim::Nanos> per_microbatch = {(slowest + m - 1) / m};
          if (!replica_m.empty()) {
            per_microbatch.resize(replica_m.size());
            for (std::size_t i = 0; i < replica_m.size(); ++i)
              per_microbatch[i] = (replica_slowest[i] + replica_m[i] - 1) / replica_m[i];
          }
          engine_.schedule_at(std::max(engine_.now(), begin + pipeline_span(per_microbatch)), data_parallel);
        },
        in_flight_, flow_reuse());
  };

  // Phase 1: the expert-parallel all-to-all.
  const auto& ep_groups = placement_->ep_groups();
  if (ep_groups.empty() || job_.alltoall_bytes == 0) {
    pipeline();
    return;
  }
  std::vector<Flow> flows;
  std::vector<std::pair<std::size_t, int>> receiver;  // (group, position) per flow
  const double share = static_cast<double>(job_.alltoall_bytes) / job_.parallelism.ep;
  for (std::size_t g = 0; g < ep_groups.size(); ++g) {
    const auto& members = ep_groups[g].ranks;
    for (std::size_t i = 0; i < members.size(); ++i)
      for (std::size_t j = 0; j < members.size(); ++j)
        if (i != j) {
          flows.push_back({end_of(members[i]), end_of(members[j]), share});
          receiver.push_back({g, static_cast<int>(j)});
        }
  }
  auto rank_end = std::make_shared<std::vector<std::vector<sim::Nanos>>>(ep_groups.size());
  for (std::size_t g = 0; g < ep_groups.size(); ++g) (*rank_end)[g].assign(ep_groups[g].ranks.size(), start);
  start_flows(
      engine_, flows, job_.channels,
      [rank_end, receiver](std::size_t i, sim::Nanos at) {
        auto& slot_end = (*rank_end)[receiver[i].first][static_cast<std::size_t>(receiver[i].second)];
        slot_end = std::max(slot_end, at);
      },
      [this, o, epoch, start, rank_end, name, pipeline] {
        if (epoch != epoch_) return;
        const auto& groups = placement_->ep_groups();
        for (std::size_t g = 0; g < groups.size(); ++g) {
          const auto& members = groups[g].ranks;
          for (std::size_t i = 0; i < members.size(); ++i)
            o->records.push_back(collective(groups[g].communicator, static_cast<int>(i), name(members[i]), "alltoall",
                                            "direct", job_.alltoall_bytes, o->iteration, start, (*rank_end)[g][i],
                                            name(members[(i + 1) % members.size()])));
        }
        pipeline();
      },
      in_flight_, flow_reuse());
}

// Flow sets may replay an earlier outcome only where fast-forward may skip
// work: with it off every flow is simulated, the reference runs compare to.
FlowReuse TrainingJob::flow_reuse() {
  if (!fast_forward_) return {};
  return {&flow_outcomes_, next_change_ ? next_change_() : kForever};
}

void TrainingJob::finish_iteration(std::shared_ptr<Outcome> outcome) {
  const sim::Nanos end = outcome->start + outcome->duration;
  const std::uint64_t epoch = epoch_;
  // Ring ends include latency terms computed ahead of the flows' completion;
  // move on at the collective's end, never before the present.
  engine_.schedule_at(std::max(end, engine_.now()), [this, outcome, end, epoch] {
    if (epoch != epoch_) return;
    current_.reset();
    if (end > horizon_) return;
    std::vector<telemetry::Record> records;
    records.reserve(outcome->records.size() + static_cast<std::size_t>(placement_->ranks()));
    for (int r = 0; r < placement_->ranks(); ++r) {
      telemetry::Record record;
      auto* it = record.mutable_iteration();
      it->set_worker(placement_->worker_name(r));
      it->set_iteration(outcome->iteration);
      it->set_start_ns(outcome->start);
      it->set_end_ns(end);
      it->set_compute_ns(outcome->busy[static_cast<std::size_t>(r)]);
      records.push_back(std::move(record));
    }
    for (telemetry::Record& record : outcome->records) records.push_back(std::move(record));
    outcome->records = std::move(records);
    record_span(outcome->start, outcome->duration, 1);
    for (const telemetry::Record& record : outcome->records) bus_.publish_copy(record);
    ++progress_;
    ++executed_;
    executed_at_simulation_ = executed_;
    if (outcome->reusable) last_ = outcome;
    else last_.reset();
    after_iteration();
  });
}

void TrainingJob::after_iteration() {
  if (state_ != JobState::running) return;
  if (reconfigure_pending_) {
    write_checkpoint(true);
    return;
  }
  if (job_.checkpoint_interval > 0 && engine_.now() >= checkpoint_due()) {
    write_checkpoint(false);
    return;
  }
  begin_iteration();
}

// The hung collective's records: the ranks that entered it wait forever
// (end 0); ranks on failed hardware never entered it and leave no record.
void TrainingJob::publish_hang(sim::Nanos at) {
  const auto& groups = job_.parallelism.dp > 1 ? placement_->dp_groups() : placement_->tp_groups();
  const bool data_parallel = job_.parallelism.dp > 1;
  for (const DpGroup& group : groups) {
    const std::size_t n = group.ranks.size();
    for (std::size_t pos = 0; pos < n; ++pos) {
      const RankPlace& place = placement_->rank(group.ranks[pos]);
      if (gpu_failed(place.host, place.gpu)) continue;
      bus_.publish(collective(group.communicator, static_cast<int>(pos), placement_->worker_name(group.ranks[pos]),
                              "allreduce", "ring", data_parallel ? job_.gradient_bytes : job_.tp_bytes, progress_,
                              at, 0, placement_->worker_name(group.ranks[(pos + 1) % n])));
    }
  }
}

void TrainingJob::record_span(sim::Nanos start, sim::Nanos duration, std::uint64_t count) {
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

bool TrainingJob::uses_link(sim::LinkId link) const {
  auto crosses = [&](int a, int b) {
    if (placement_->rank(a).host == placement_->rank(b).host) return false;
    const auto route = engine_.route(rank_endpoint(a), rank_endpoint(b));
    return std::find(route.begin(), route.end(), link) != route.end();
  };
  for (const DpGroup& g : placement_->dp_groups())
    for (std::size_t i = 0; i < g.ranks.size(); ++i)
      if (crosses(g.ranks[i], g.ranks[(i + 1) % g.ranks.size()])) return true;
  for (const PipelineEdge& e : placement_->pipeline_edges())
    if (crosses(e.sender, e.receiver) || crosses(e.receiver, e.sender)) return true;
  if (job_.alltoall_bytes > 0)
    for (const DpGroup& g : placement_->ep_groups())
      for (int a : g.ranks)
        for (int b : g.ranks)
          if (a != b && crosses(a, b)) return true;
  return false;
}

}  // namespace gauntlet::models
