#include "models/training_job.hpp"

#include <algorithm>
#include <limits>
#include <memory>

#include "models/ring_allreduce.hpp"

namespace gauntlet::models {
namespace {

// Rewrites one iteration's records as those of iteration `iteration`
// starting `shift` later.
telemetry::Record shifted(const telemetry::Record& record, sim::Nanos shift, std::uint64_t iteration) {
  telemetry::Record out = record;
  if (out.has_iteration()) {
    auto* it = out.mutable_iteration();
    it->set_iteration(iteration);
    it->set_start_ns(it->start_ns() + shift);
    it->set_end_ns(it->end_ns() + shift);
  } else if (out.has_collective()) {
    auto* c = out.mutable_collective();
    c->set_sequence(iteration);
    c->set_start_ns(c->start_ns() + shift);
    if (c->end_ns() != 0) c->set_end_ns(c->end_ns() + shift);
  }
  return out;
}

}  // namespace

TrainingJob::TrainingJob(const JobSpec& job, const sim::Topology& topology, sim::NetworkEngine& engine,
                         sim::TelemetryBus& bus)
    : job_(job),
      placement_(job, topology),
      engine_(engine),
      bus_(bus),
      speed_(static_cast<std::size_t>(placement_.ranks()), 1.0) {}

void TrainingJob::start(sim::Nanos at, sim::Nanos horizon) {
  horizon_ = horizon;
  engine_.schedule_at(at, [this] { begin_iteration(); });
}

void TrainingJob::set_gpu_speed(int host, int gpu, double speed) {
  for (int r = 0; r < placement_.ranks(); ++r) {
    const RankPlace& place = placement_.rank(r);
    if (place.host == host && place.gpu == gpu) speed_[static_cast<std::size_t>(r)] = speed;
  }
  ++compute_version_;
}

double TrainingJob::gpu_speed(int host, int gpu) const {
  for (int r = 0; r < placement_.ranks(); ++r)
    if (placement_.rank(r).host == host && placement_.rank(r).gpu == gpu) return speed_[static_cast<std::size_t>(r)];
  return 1.0;
}

std::uint64_t TrainingJob::completed_iterations() const {
  std::uint64_t total = 0;
  for (const IterationSpan& span : timeline_) total += span.count;
  return total;
}

void TrainingJob::begin_iteration() {
  if (engine_.now() >= horizon_) return;
  if (fast_forward_ && try_fast_forward()) return;
  simulate_iteration();
}

bool TrainingJob::try_fast_forward() {
  if (!last_ || last_->key_network != engine_.state_version() || last_->key_compute != compute_version_) return false;
  const sim::Nanos now = engine_.now();
  sim::Nanos limit = horizon_;
  if (next_change_) limit = std::min(limit, next_change_());
  const sim::Nanos duration = last_->duration;
  if (duration <= 0 || limit - now < duration) return false;
  const auto count = static_cast<std::uint64_t>((limit - now) / duration);
  const std::uint64_t first = next_iteration_;
  next_iteration_ += count;
  record_span(now, duration, count);
  const sim::Nanos end = now + static_cast<sim::Nanos>(count) * duration;
  engine_.schedule_at(end, [this, first, count, now, duration] {
    telemetry::SteadyRun run;
    run.set_first_iteration(first);
    run.set_last_iteration(first + count - 1);
    run.set_period_ns(duration);
    for (const telemetry::Record& record : last_->records)
      *run.add_records() = shifted(record, now - last_->start, first);
    bus_.publish_steady(std::move(run));
    begin_iteration();
  });
  return true;
}

void TrainingJob::simulate_iteration() {
  const sim::Nanos start = engine_.now();
  const std::uint64_t iteration = next_iteration_++;
  ++simulated_iterations_;
  auto outcome = std::make_shared<Outcome>();
  outcome->key_network = engine_.state_version();
  outcome->key_compute = compute_version_;
  outcome->start = start;

  std::vector<sim::Nanos> compute(static_cast<std::size_t>(placement_.ranks()));
  for (int r = 0; r < placement_.ranks(); ++r)
    compute[static_cast<std::size_t>(r)] = static_cast<sim::Nanos>(
        static_cast<double>(job_.compute_per_iteration) / speed_[static_cast<std::size_t>(r)]);

  const auto& groups = placement_.dp_groups();
  auto pending = std::make_shared<std::size_t>(groups.size());
  auto group_results = std::make_shared<std::vector<RingResult>>(groups.size());
  auto on_all_done = [this, outcome, compute, group_results, iteration, start] {
    sim::Nanos end = start;
    for (const RingResult& ring : *group_results) end = std::max(end, ring.end);
    for (int r = 0; r < placement_.ranks(); ++r) {
      telemetry::Record record;
      auto* it = record.mutable_iteration();
      it->set_worker(placement_.worker_name(r));
      it->set_iteration(iteration);
      it->set_start_ns(start);
      it->set_end_ns(end);
      it->set_compute_ns(compute[static_cast<std::size_t>(r)]);
      outcome->records.push_back(std::move(record));
    }
    const auto& groups = placement_.dp_groups();
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const auto& ranks = groups[g].ranks;
      for (std::size_t pos = 0; pos < ranks.size(); ++pos) {
        telemetry::Record record;
        auto* c = record.mutable_collective();
        c->set_communicator(groups[g].communicator);
        c->set_rank(static_cast<std::uint32_t>(pos));
        c->set_worker(placement_.worker_name(ranks[pos]));
        c->set_op("allreduce");
        c->set_algorithm("ring");
        c->set_bytes(job_.gradient_bytes);
        c->set_sequence(iteration);
        c->set_start_ns((*group_results)[g].start);
        c->set_end_ns((*group_results)[g].rank_end[pos]);
        c->set_peer(placement_.worker_name(ranks[(pos + 1) % ranks.size()]));
        outcome->records.push_back(std::move(record));
      }
    }
    outcome->duration = end - start;
    finish_iteration(std::move(*outcome));
  };

  if (groups.empty()) {
    engine_.schedule_at(start, on_all_done);
    return;
  }
  for (std::size_t g = 0; g < groups.size(); ++g) {
    // A ring starts when its slowest member has finished computing.
    sim::Nanos ready = start;
    std::vector<sim::EndpointId> endpoints;
    for (int r : groups[g].ranks) {
      ready = std::max(ready, start + compute[static_cast<std::size_t>(r)]);
      endpoints.push_back(placement_.rank(r).endpoint);
    }
    engine_.schedule_at(ready, [this, g, endpoints, pending, group_results, on_all_done] {
      start_ring_allreduce(engine_, endpoints, static_cast<double>(job_.gradient_bytes),
                           [g, pending, group_results, on_all_done](const RingResult& result) {
                             (*group_results)[g] = result;
                             if (--*pending == 0) on_all_done();
                           });
    });
  }
}

void TrainingJob::finish_iteration(Outcome outcome) {
  const sim::Nanos end = outcome.start + outcome.duration;
  // Ring ends include latency terms computed ahead of the flows' completion;
  // move on at the collective's end, never before the present.
  engine_.schedule_at(end, [this, outcome = std::move(outcome), end]() mutable {
    if (end <= horizon_) {
      record_span(outcome.start, outcome.duration, 1);
      for (const telemetry::Record& record : outcome.records) bus_.publish(record);
    }
    last_ = std::move(outcome);
    begin_iteration();
  });
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

}  // namespace gauntlet::models
