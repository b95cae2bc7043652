#include "models/host/job_view.hpp"

#include <optional>
#include <set>
#include <vector>

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
  // A flag per GPU of the cluster: a sample asks of every GPU and host.
  auto used = std::make_shared<std::vector<char>>();
  const sim::Topology& topology = engine.topology();
  SampleInputs inputs;
  inputs.gpu_busy = [used, active, &job, &topology](int host, int gpu) {
    if (!active) return false;
    const int per_host = topology.shape().gpus_per_host;
    if (used->empty()) {
      used->assign(static_cast<std::size_t>(topology.hosts()) * static_cast<std::size_t>(per_host), 0);
      const Placement& placement = job.placement();
      for (int r = 0; r < placement.ranks(); ++r) {
        const RankPlace& p = placement.rank(r);
        if (p.host < 0 || p.host >= topology.hosts() || p.gpu < 0 || p.gpu >= per_host) continue;
        if (!job.cluster().gpu_failed(p.host, p.gpu))
          (*used)[static_cast<std::size_t>(p.host) * static_cast<std::size_t>(per_host) +
                  static_cast<std::size_t>(p.gpu)] = 1;
      }
    }
    if (host < 0 || host >= topology.hosts() || gpu < 0 || gpu >= per_host) return false;
    return (*used)[static_cast<std::size_t>(host) * static_cast<std::size_t>(per_host) +
                   static_cast<std::size_t>(gpu)] != 0;
  };
  inputs.link_up = [&engine, &topology](sim::EndpointId e) {
    return engine.link_state(topology.host_link(e)).up && engine.endpoint_state(e).up;
  };
  inputs.traffic_flowing = state == JobState::running;
  // Everything the two callables read, folded into one key: a failure or
  // repair of a job's GPU changes its state, a re-placement its restarts.
  std::uint64_t key = engine.state_version();
  for (std::uint64_t part :
       {static_cast<std::uint64_t>(state), static_cast<std::uint64_t>(job.restarts()),
        static_cast<std::uint64_t>(job.isolated_hosts().size()), static_cast<std::uint64_t>(job.spares_used())})
    key = key * 1000003u + part;
  inputs.version = key;
  return inputs;
}

}  // namespace gauntlet::models
