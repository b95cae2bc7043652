#include "models/host/job_view.hpp"

#include <optional>
#include <set>

namespace gauntlet::models {

HardwareSampler::EndpointOf job_endpoints(const TrainingJob& job, const sim::Topology& topology) {
  auto table = std::make_shared<std::map<std::pair<int, int>, sim::EndpointId>>();
  const Placement& placement = job.placement();
  for (int r = 0; r < placement.ranks(); ++r)
    (*table)[{placement.rank(r).host, placement.rank(r).gpu}] = job.rank_endpoint(r);
  return [table, &topology](int host, int gpu) {
    auto it = table->find({host, gpu});
    return it != table->end() ? it->second : topology.endpoint(host, topology.nic_of_gpu(gpu));
  };
}

SampleInputs job_sample_inputs(const TrainingJob& job, const sim::NetworkEngine& engine) {
  // A hung job's GPUs still spin in their collective kernels; a stopped one's idle.
  const JobState state = job.state();
  const bool active = state == JobState::running || state == JobState::hung;
  // The GPUs the job computes on, listed on first use only: a sample with
  // nothing changed never asks.
  auto used = std::make_shared<std::optional<std::set<std::pair<int, int>>>>();
  SampleInputs inputs;
  inputs.gpu_busy = [used, active, &job](int host, int gpu) {
    if (!active) return false;
    if (!*used) {
      used->emplace();
      const Placement& placement = job.placement();
      for (int r = 0; r < placement.ranks(); ++r) {
        const RankPlace& p = placement.rank(r);
        if (!job.cluster().gpu_failed(p.host, p.gpu)) (*used)->insert({p.host, p.gpu});
      }
    }
    return (*used)->count({host, gpu}) > 0;
  };
  const sim::Topology& topology = engine.topology();
  inputs.link_up = [&engine, &topology](sim::EndpointId e) {
    return engine.link_state(topology.host_link(e)).up && engine.endpoint_state(e).up;
  };
  inputs.traffic_flowing = state == JobState::running;
  // Everything the two callables read, folded into one key: a failure or
  // repair of a job's GPU changes its state, a re-placement its restarts.
  std::uint64_t key = engine.state_version();
  for (std::uint64_t part : {static_cast<std::uint64_t>(state), static_cast<std::uint64_t>(job.restarts()),
                             static_cast<std::uint64_t>(job.isolated_hosts().size()),
                             static_cast<std::uint64_t>(job.spares_used())})
    key = key * 1000003u + part;
  inputs.version = key;
  return inputs;
}

}  // namespace gauntlet::models
