#include "models/benchmark_service.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "models/ring_allreduce.hpp"
#include "sim/component_id.hpp"

namespace gauntlet::models {

BenchmarkService::BenchmarkService(sim::NetworkEngine& engine, JobControl& job, sim::TelemetryBus& bus,
                                   KernelRunner gpus, std::uint64_t seed, BenchmarkSettings settings)
    : engine_(engine),
      job_(job),
      bus_(bus),
      gpus_(std::move(gpus)),
      rng_(sim::RngStreams(seed).stream("benchmarks")),
      settings_(settings) {}

void BenchmarkService::submit(BenchmarkOrder order) {
  if (order.kind != "gemm" && order.kind != "allreduce")
    throw std::invalid_argument("benchmark kind '" + order.kind + "' is not one of gemm, allreduce");
  queue_.push_back(std::move(order));
  if (active_) return;
  active_ = true;
  job_.hold([this] { on_held(); });
}

BenchmarkCost BenchmarkService::cost(const std::string& detector) const {
  auto it = costs_.find(detector);
  return it == costs_.end() ? BenchmarkCost{} : it->second;
}

void BenchmarkService::on_held() {
  pace_ = job_.timeline().empty() ? 0 : job_.timeline().back().duration;
  run_next();
}

void BenchmarkService::run_next() {
  if (queue_.empty()) {
    active_ = false;
    job_.release();
    return;
  }
  const BenchmarkOrder order = queue_.front();
  queue_.pop_front();
  if (order.kind == "gemm")
    run_gemm(order);
  else
    run_allreduce(order);
}

sim::Nanos BenchmarkService::jittered(sim::Nanos value) {
  const double factor = 1.0 + settings_.jitter * (2 * rng_.uniform() - 1);
  return static_cast<sim::Nanos>(std::llround(static_cast<double>(value) * factor));
}

void BenchmarkService::run_gemm(const BenchmarkOrder& order) {
  const sim::Nanos started = engine_.now();
  const Placement& placement = job_.placement();
  std::vector<std::pair<std::string, std::pair<int, int>>> gpus;  // worker, (host, gpu)
  if (order.targets.empty()) {
    for (int r = 0; r < placement.ranks(); ++r)
      gpus.push_back({placement.worker_name(r), {placement.rank(r).host, placement.rank(r).gpu}});
  } else {
    for (const std::string& target : order.targets) {
      const auto id = sim::ComponentId::parse(target);
      if (id && id->kind == sim::ComponentKind::gpu) gpus.push_back({target, {id->host, id->index}});
    }
  }
  std::vector<Result> results;
  sim::Nanos longest = 0;
  for (const auto& [worker, place] : gpus) {
    const std::optional<sim::Nanos> ran = gpus_(place.first, place.second, settings_.gemm_time);
    if (!ran) continue;  // a dead GPU runs nothing and reports nothing
    const sim::Nanos d = jittered(*ran);
    results.push_back({worker, d});
    longest = std::max(longest, d);
  }
  const std::uint64_t generation = ++generation_;
  engine_.schedule_at(started + longest, [this, order, started, results, generation] {
    if (generation == generation_) finish(order, started, results);
  });
}

void BenchmarkService::run_allreduce(const BenchmarkOrder& order) {
  const sim::Nanos started = engine_.now();
  std::vector<const DpGroup*> groups;
  for (const DpGroup& g : job_.placement().dp_groups())
    if (order.targets.empty() ||
        std::find(order.targets.begin(), order.targets.end(), g.communicator) != order.targets.end())
      groups.push_back(&g);
  if (groups.empty()) {
    finish(order, started, {});
    return;
  }
  struct Progress {
    std::vector<Result> results;
    std::size_t pending = 0;
    bool done = false;
  };
  auto progress = std::make_shared<Progress>();
  progress->pending = groups.size();
  const std::uint64_t generation = ++generation_;
  auto complete = [this, order, started, progress, generation] {
    if (progress->done || generation != generation_) return;
    progress->done = true;
    finish(order, started, progress->results);
  };
  for (const DpGroup* g : groups) {
    std::vector<FlowEnd> ring;
    for (int r : g->ranks) ring.push_back({job_.placement().rank(r).host, job_.rank_endpoint(r)});
    const std::string communicator = g->communicator;
    start_ring(engine_, ring, RingOp::allreduce, settings_.allreduce_bytes, job_.spec().channels,
               [this, progress, communicator, started, complete](const RingResult& result) {
                 if (progress->done) return;
                 progress->results.push_back({communicator, jittered(result.end - started)});
                 if (--progress->pending > 0) return;
                 // Ring ends include latency terms ahead of the flows' completion.
                 engine_.schedule_at(std::max(engine_.now(), result.end), complete);
               });
  }
  std::vector<std::string> names;
  for (const DpGroup* g : groups) names.push_back(g->communicator);
  engine_.schedule_at(started + settings_.timeout, [this, progress, names, started, complete] {
    if (progress->done) return;
    // Rings still running are reported at the timeout: at least this slow.
    for (const std::string& name : names) {
      const bool reported = std::any_of(progress->results.begin(), progress->results.end(),
                                        [&](const Result& r) { return r.target == name; });
      if (!reported) progress->results.push_back({name, engine_.now() - started});
    }
    complete();
  });
}

void BenchmarkService::finish(const BenchmarkOrder& order, sim::Nanos started, const std::vector<Result>& results) {
  std::vector<Result> sorted = results;
  std::sort(sorted.begin(), sorted.end(), [](const Result& a, const Result& b) { return a.target < b.target; });
  for (const Result& r : sorted) {
    telemetry::Record record;
    auto* b = record.mutable_benchmark();
    b->set_detector(order.detector);
    b->set_kind(order.kind);
    b->set_target(r.target);
    b->set_time_ns(started + r.duration);
    b->set_duration_ns(r.duration);
    bus_.publish(std::move(record));
  }
  BenchmarkCost& cost = costs_[order.detector];
  const sim::Nanos paused = engine_.now() - started;
  ++cost.benchmarks;
  cost.pause_seconds += sim::to_seconds(paused);
  if (pace_ > 0) cost.pause_iterations += static_cast<double>(paused) / static_cast<double>(pace_);
  run_next();
}

}  // namespace gauntlet::models
