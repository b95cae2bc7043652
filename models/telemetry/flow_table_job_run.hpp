#pragma once
// Test support: runs a training job with the flow table sampler in a forked
// child (one flow engine per process), observing every second as the runner
// does, and brings back every batch and the job's true traffic pairs.
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "models/telemetry/flow_table_sampler.hpp"
#include "models/training_job.hpp"
#include "sim/flow/flow_engine.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::models::testing {

using EndpointPairs = std::set<std::pair<sim::EndpointId, sim::EndpointId>>;

struct FlowTableJobRun {
  std::vector<telemetry::Batch> batches;  // one per second
  // Ground truth the detector must not be told: RNIC pairs of the DP ring
  // edges and of the pipeline edges (sender, receiver) that cross hosts, at
  // the start and at the end of the run.
  EndpointPairs ring_edges_first, ring_edges_last, pipeline_pairs_first, pipeline_pairs_last;
  std::vector<int> hosts_first, hosts_last;
  std::uint64_t iterations_completed = 0;  // by the horizon
  sim::Nanos last_end = 0;                 // of the last completed iteration
};

namespace detail {

inline void write_truth(std::ostringstream& o, const char* tag, const TrainingJob& job, const sim::Topology& t) {
  const Placement& p = job.placement();
  auto crosses = [&](int a, int b) { return t.host_of(job.rank_endpoint(a)) != t.host_of(job.rank_endpoint(b)); };
  for (const DpGroup& g : p.dp_groups())
    for (std::size_t i = 0; i < g.ranks.size() && g.ranks.size() > 1; ++i) {
      const int a = g.ranks[i], b = g.ranks[(i + 1) % g.ranks.size()];
      if (crosses(a, b)) o << tag << " R " << job.rank_endpoint(a) << " " << job.rank_endpoint(b) << "\n";
    }
  for (const PipelineEdge& e : p.pipeline_edges())
    if (crosses(e.sender, e.receiver))
      o << tag << " P " << job.rank_endpoint(e.sender) << " " << job.rank_endpoint(e.receiver) << "\n";
  for (int h : p.hosts()) o << tag << " H " << h << " 0\n";
}

}  // namespace detail

// `setup` may schedule actions on the job (isolations, faults) before it
// starts. The engine runs `drain` past the horizon so that the flows of an
// iteration in progress there finish and are counted.
inline FlowTableJobRun run_flow_table_job(const sim::ClusterShape& shape, const JobSpec& spec, sim::Nanos horizon,
                                          const std::function<void(sim::FlowEngine&, TrainingJob&)>& setup = {},
                                          sim::Nanos drain = sim::kMinute) {
  const std::string text = sim::run_isolated([&] {
    sim::Topology topology(shape);
    sim::FlowEngine engine(topology, 5);
    sim::TelemetryBus bus;
    TrainingJob job(spec, topology, engine, bus);
    job.set_fast_forward(true);
    FlowTableSampler sampler(engine);
    const sim::ReplayLedger::Observation replays = engine.observe_replays([&](const sim::ReplayedSet& set) {
      for (std::size_t i = 0; i < set.transfers.size(); ++i) {
        const sim::TransferRequest& t = set.transfers[i];
        sampler.add_replayed(t.src, t.dst, set.start, set.delivered[i] - engine.route_latency(t.src, t.dst), t.bytes);
      }
    });
    if (setup) setup(engine, job);
    job.set_change_horizon([horizon] { return horizon; });
    std::ostringstream o;
    detail::write_truth(o, "F", job, topology);
    job.start(0, horizon);
    std::string batches;
    for (sim::Nanos t = sim::kSecond; t <= horizon + drain; t += sim::kSecond) {
      engine.run_until(t);
      telemetry::Batch batch = bus.drain(t);
      sampler.sample(t, &batch);
      const std::string bytes = batch.SerializeAsString();
      batches += std::to_string(bytes.size()) + ":" + bytes;
    }
    detail::write_truth(o, "L", job, topology);
    const auto& timeline = job.timeline();
    sim::Nanos last_end = 0;
    if (!timeline.empty())
      last_end = timeline.back().start + static_cast<sim::Nanos>(timeline.back().count) * timeline.back().duration;
    o << "I " << job.executed_iterations() << " " << last_end << " 0\n";
    return o.str() + "\n" + batches;
  });
  FlowTableJobRun run;
  const std::size_t split = text.find("\n\n");
  std::istringstream in(text.substr(0, split));
  std::string tag, kind;
  long long a = 0, b = 0;
  while (in >> tag >> kind >> a >> b) {
    if (tag == "I") {
      run.iterations_completed = static_cast<std::uint64_t>(std::stoull(kind));
      run.last_end = a;
      continue;
    }
    const bool first = tag == "F";
    if (kind == "H")
      (first ? run.hosts_first : run.hosts_last).push_back(static_cast<int>(a));
    else if (kind == "R")
      (first ? run.ring_edges_first : run.ring_edges_last).insert({a, b});
    else if (kind == "P")
      (first ? run.pipeline_pairs_first : run.pipeline_pairs_last).insert({a, b});
  }
  std::size_t at = split + 2;
  while (at < text.size()) {
    const std::size_t colon = text.find(':', at);
    const std::size_t size = std::stoull(text.substr(at, colon - at));
    run.batches.emplace_back();
    run.batches.back().ParseFromString(text.substr(colon + 1, size));
    at = colon + 1 + size;
  }
  return run;
}

}  // namespace gauntlet::models::testing
