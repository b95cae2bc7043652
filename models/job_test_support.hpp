#pragma once
// Test support: runs a training job in a forked child (one flow engine per
// process) and brings back what tests look at.
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "models/training_job.hpp"
#include "sim/flow/flow_engine.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::models::testing {

// Rail-optimized pods of `hosts_per_pod` hosts with 8 GPUs and 8 RNICs each
// (8 rail leaves per pod), over 2 spines.
inline sim::ClusterShape rail_pods(int pods, int hosts_per_pod) {
  sim::ClusterShape s;
  s.spines = 2;
  s.leaves = 8 * pods;
  s.hosts = pods * hosts_per_pod;
  s.gpus_per_host = 8;
  s.rnics_per_host = 8;
  return s;
}

// tp8 pp2 dp4 on 8 hosts (a host holds one tensor-parallel group): 2 s of
// compute, a 1 GB allreduce and 100 MB micro-batch sends per iteration,
// checkpoints every 5 minutes that cost nothing (lost work stays at its
// three terms), a 3-minute watchdog and a 2-minute restart.
inline JobSpec tp8_pp2_dp4_job() {
  JobSpec j;
  j.gpus = 64;
  j.parallelism = {8, 2, 4, 1};
  j.microbatches = 4;
  j.compute_per_iteration = 2 * sim::kSecond;
  j.gradient_bytes = 1'000'000'000;
  j.activation_bytes = 100'000'000;
  j.checkpoint_interval = 5 * sim::kMinute;
  j.checkpoint_cost = 0;
  j.collective_timeout = 3 * sim::kMinute;
  j.restart_cost = 2 * sim::kMinute;
  return j;
}

struct JobEventSeen {
  int kind = 0;
  sim::Nanos time = 0;
  std::string error;
};

struct CollectiveSeen {
  std::string communicator, worker, op;
  std::uint64_t sequence = 0;
  sim::Nanos start = 0, end = 0;
};

struct JobReport {
  std::vector<IterationSpan> timeline;
  std::vector<JobEventSeen> events;
  std::vector<CollectiveSeen> unfinished;  // collective records with end 0
  std::vector<sim::Nanos> compute_ns;      // per worker: compute_ns of its last iteration record
  std::uint64_t progress = 0, executed = 0, simulated = 0;
  sim::Nanos lost_time = 0;
  int spares_used = 0;
  std::vector<int> hosts;
  std::set<std::pair<int, int>> talking;  // RNIC pairs of the DP rings and pipeline edges, at the end
  std::string extra;                      // whatever the setup's probe wrote

  sim::Nanos last_duration() const { return timeline.empty() ? 0 : timeline.back().duration; }
  int count(int kind) const {
    int n = 0;
    for (const auto& e : events) n += e.kind == kind ? 1 : 0;
    return n;
  }
  const JobEventSeen* first(int kind) const {
    for (const auto& e : events)
      if (e.kind == kind) return &e;
    return nullptr;
  }
};

struct JobHarness {
  sim::FlowEngine& engine;
  TrainingJob& job;
  sim::TelemetryBus& bus;
  std::shared_ptr<void> keep;          // state the setup needs alive during the run
  std::function<std::string()> probe;  // run after the horizon; its text lands in `extra`
};

// Runs `job` on `shape` until `horizon`; `setup` may schedule faults and set
// the change horizon before the job starts.
inline JobReport run_job(const sim::ClusterShape& shape, const JobSpec& spec, sim::Nanos horizon, bool fast_forward,
                         const std::function<void(JobHarness&)>& setup = {}) {
  const std::string text = sim::run_isolated([&] {
    sim::Topology topology(shape);
    sim::FlowEngine engine(topology, 11);
    sim::TelemetryBus bus;
    TrainingJob job(spec, topology, engine, bus);
    job.set_fast_forward(fast_forward);
    JobHarness harness{engine, job, bus, nullptr, {}};
    if (setup) setup(harness);
    job.start(0, horizon);
    engine.run_until(horizon);
    telemetry::Batch batch = bus.drain(horizon);
    std::ostringstream o;
    o << "P " << job.progress_iterations() << " " << job.executed_iterations() << " " << job.simulated_iterations()
      << " " << job.lost_iteration_time() << " " << job.spares_used() << "\n";
    for (const IterationSpan& s : job.timeline())
      o << "S " << s.first << " " << s.count << " " << s.start << " " << s.duration << "\n";
    for (int h : job.placement().hosts()) o << "H " << h << "\n";
    const Placement& p = job.placement();
    for (const DpGroup& g : p.dp_groups())
      for (std::size_t i = 0; i < g.ranks.size() && g.ranks.size() > 1; ++i)
        o << "T " << job.rank_endpoint(g.ranks[i]) << " " << job.rank_endpoint(g.ranks[(i + 1) % g.ranks.size()])
          << "\n";
    for (const PipelineEdge& e : p.pipeline_edges())
      o << "T " << job.rank_endpoint(e.sender) << " " << job.rank_endpoint(e.receiver) << "\n";
    std::vector<std::string> compute_lines;
    for (const telemetry::Record& r : batch.records()) {
      if (r.has_job()) o << "E " << r.job().kind() << " " << r.job().time_ns() << " " << r.job().error() << "\n";
      if (r.has_collective() && r.collective().end_ns() == 0)
        o << "U " << r.collective().communicator() << " " << r.collective().worker() << " " << r.collective().op()
          << " " << r.collective().sequence() << " " << r.collective().start_ns() << "\n";
    }
    std::map<std::string, sim::Nanos> compute;
    for (const telemetry::Record& r : batch.records())
      if (r.has_iteration()) compute[r.iteration().worker()] = r.iteration().compute_ns();
    for (const auto& [worker, ns] : compute) o << "C " << ns << "\n";
    if (harness.probe) o << "X " << harness.probe() << "\n";
    return o.str();
  });
  JobReport report;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    std::string tag;
    l >> tag;
    if (tag == "P") {
      l >> report.progress >> report.executed >> report.simulated >> report.lost_time >> report.spares_used;
    } else if (tag == "S") {
      IterationSpan s;
      l >> s.first >> s.count >> s.start >> s.duration;
      report.timeline.push_back(s);
    } else if (tag == "H") {
      int h;
      l >> h;
      report.hosts.push_back(h);
    } else if (tag == "T") {
      int a, b;
      l >> a >> b;
      report.talking.insert({a, b});
    } else if (tag == "E") {
      JobEventSeen e;
      l >> e.kind >> e.time;
      std::getline(l >> std::ws, e.error);
      report.events.push_back(e);
    } else if (tag == "U") {
      CollectiveSeen c;
      l >> c.communicator >> c.worker >> c.op >> c.sequence >> c.start;
      report.unfinished.push_back(c);
    } else if (tag == "C") {
      sim::Nanos c;
      l >> c;
      report.compute_ns.push_back(c);
    } else if (tag == "X") {
      std::getline(l >> std::ws, report.extra);
    }
  }
  return report;
}

}  // namespace gauntlet::models::testing
