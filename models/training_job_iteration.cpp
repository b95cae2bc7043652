// The iteration loop: each step simulated as an IterationRun (or skipped
// over by steady-state fast-forward), the records it produced published at
// its end, then the next step, a checkpoint or a re-placement.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>

#include "models/collective_record.hpp"
#include "models/training_job.hpp"
#include "sim/contract.hpp"

namespace gauntlet::models {
namespace {

constexpr sim::Nanos kForever = std::numeric_limits<sim::Nanos>::max();

}  // namespace

void TrainingJob::begin_iteration() {
  if (state_ != JobState::running || engine_.now() >= horizon_) return;
  if (hold_requested_) {
    if (parked_) return;
    parked_ = true;
    if (auto held = std::exchange(on_held_, {})) engine_.schedule_at(engine_.now(), std::move(held));
    return;
  }
  if (pending_pause_ > 0) {  // a lever's pause
    const sim::Nanos pause = std::exchange(pending_pause_, 0);
    const std::uint64_t epoch = epoch_;
    engine_.schedule_at(engine_.now() + pause, [this, epoch] {
      if (epoch == epoch_) begin_iteration();
    });
    return;
  }
  if (fast_forward_ && !pending_corruption_ && try_fast_forward()) return;
  simulate_iteration();
}

void TrainingJob::restart_step() {
  if (!current_ && !steady_) return;
  interrupt();
  begin_iteration();
}

bool TrainingJob::try_fast_forward() {
  // A reconfiguration that came while the job was not iterating (writing a
  // checkpoint, say) applies at the next iteration boundary, as it does step
  // by step: never after a stretch.
  if (reconfigure_pending_) return false;
  if (!last_ || last_->key_network != engine_.state_version() || last_->key_cluster != cluster_.version() ||
      last_->key_job != job_version_ || *in_flight_ != 0)
    return false;
  // Only an iteration simulated on an otherwise idle network is repeated.
  GAUNTLET_INVARIANT(last_->reusable);
  const sim::Nanos now = engine_.now();
  sim::Nanos limit = horizon_;
  if (next_change_) limit = std::min(limit, next_change_());
  // The daily cycle (models/fleet/healthy_gpus.hpp) moves the fleet's pace
  // between simulated iterations. Llama 3 reports it as a change of the
  // job's whole throughput, so the repeated iteration's time scales by the
  // ratio of paces, its communication with its compute.
  const double scale = last_->pace / cluster_.pace();
  const sim::Nanos duration =
      scale == 1.0 ? last_->duration : std::llround(static_cast<double>(last_->duration) * scale);
  if (duration <= 0 || limit - now < duration) return false;
  auto count = static_cast<std::uint64_t>((limit - now) / duration);
  // A stretch lasts at most as long as the steady state before it (1, 2, 4,
  // ... iterations after a change): telemetry of a new state is published
  // within about as long as it has lasted, for a few more stretches per change.
  count = std::min(count, ledger_.executed() - executed_at_simulation_ + 1);
  if (job_.checkpoint_interval > 0) {
    // Stop at the first iteration boundary at or after the checkpoint's due
    // time, exactly where a step-by-step run writes it.
    const sim::Nanos until_due = std::max<sim::Nanos>(checkpoint_due() - now, 1);
    count = std::min(count, static_cast<std::uint64_t>((until_due + duration - 1) / duration));
  }
  GAUNTLET_INVARIANT(count > 0 && !current_ && !steady_, "a steady run began beside a step");
  steady_ = Steady{ledger_.progress(), count, now, duration, scale};
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
  // The stretch repeats the iterations right after the last one counted.
  GAUNTLET_INVARIANT(count <= run.count && run.first == ledger_.progress());
  if (count == 0) return;
  const std::vector<const telemetry::Record*>& repeated = records_to_repeat();
  steady_template_.publish(bus_, repeated, steady_records_version_,
                           {.first_iteration = run.first,
                            .count = count,
                            .period = run.duration,
                            .shift = run.start - last_->start,
                            .origin = last_->start,
                            .scale = run.scale});
  ledger_.complete(run.start, run.duration, count);
}

const std::vector<const telemetry::Record*>& TrainingJob::records_to_repeat() {
  if (filtered_for_ == last_) return steady_records_;
  filtered_for_ = last_;
  steady_records_version_ = bus_.next_records_version();
  steady_records_.clear();
  for (const telemetry::Record& record : last_->records)
    if (!steady_filter_ || steady_filter_(record)) steady_records_.push_back(&record);
  return steady_records_;
}

void TrainingJob::simulate_iteration() {
  // A job runs one step at a time.
  GAUNTLET_INVARIANT(state_ == JobState::running && !current_ && !steady_, "a step began beside another");
  ++simulated_iterations_;
  auto outcome = std::make_shared<IterationOutcome>();
  outcome->key_network = engine_.state_version();
  outcome->key_cluster = cluster_.version();
  outcome->key_job = job_version_;
  outcome->pace = cluster_.pace();
  outcome->reusable = *in_flight_ == 0;
  outcome->iteration = ledger_.progress();
  outcome->start = engine_.now();
  current_ = std::make_shared<IterationRun>(
      IterationInputs{engine_, job_, *placement_, cluster_, split_, stepwise_rings_, in_flight_,
                      [this] { return flow_reuse(); }},
      outcome, [this](std::shared_ptr<IterationOutcome> done) { finish_iteration(std::move(done)); });
  current_->start();
}

// Flow sets may replay an earlier outcome only where fast-forward may skip
// work: with it off every flow is simulated, the reference runs compare to.
FlowReuse TrainingJob::flow_reuse() {
  if (!fast_forward_) return {};
  FlowReuse reuse{&flow_outcomes_, next_change_ ? next_change_() : kForever};
  reuse.archive = flow_set_archive_;
  return reuse;
}

void TrainingJob::finish_iteration(std::shared_ptr<IterationOutcome> outcome) {
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
      if (!outcome->microbatches.empty()) {
        it->set_microbatches(outcome->microbatches[static_cast<std::size_t>(r)]);
        it->set_layers(outcome->layers[static_cast<std::size_t>(r)]);
      }
      records.push_back(std::move(record));
    }
    for (telemetry::Record& record : outcome->records) records.push_back(std::move(record));
    outcome->records = std::move(records);
    ledger_.complete(outcome->start, outcome->duration, 1);
    publish_step_records(*outcome);
    executed_at_simulation_ = ledger_.executed();
    if (outcome->reusable)
      last_ = outcome;
    else
      last_.reset();
    after_iteration();
  });
}

// The step's records; a corrupted step's iteration records carry what the
// framework logged of it (the outcome kept for fast-forward stays clean).
void TrainingJob::publish_step_records(const IterationOutcome& outcome) {
  const std::optional<StepCorruption> corruption = std::exchange(pending_corruption_, std::nullopt);
  for (const telemetry::Record& record : outcome.records) {
    if (!corruption || !record.has_iteration()) {
      bus_.publish_copy(record);
      continue;
    }
    telemetry::Record marked = record;
    marked.mutable_iteration()->set_nonfinite_gradients(corruption->nonfinite_gradients);
    marked.mutable_iteration()->set_loss_spike(corruption->loss_spike);
    bus_.publish(std::move(marked));
  }
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
      if (cluster_.gpu_failed(place.host, place.gpu)) continue;
      bus_.publish(collective_record(group.communicator, static_cast<int>(pos),
                                     placement_->worker_name(group.ranks[pos]), "allreduce", "ring",
                                     data_parallel ? job_.gradient_bytes : job_.tp_bytes, ledger_.progress(), at, 0,
                                     placement_->worker_name(group.ranks[(pos + 1) % n])));
    }
  }
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
