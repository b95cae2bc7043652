#include "models/placement.hpp"

#include <stdexcept>

#include "sim/component_id.hpp"

namespace gauntlet::models {

Placement::Placement(const JobSpec& job, const sim::Topology& topology) {
  const ParallelismSpec& p = job.parallelism;
  const int gpus_per_host = topology.shape().gpus_per_host;
  if (p.tp < 1 || p.pp < 1 || p.dp < 1 || p.ep < 1) throw std::invalid_argument("parallel degrees must be positive");
  if (p.tp * p.pp * p.dp != job.gpus) throw std::invalid_argument("tp * pp * dp must equal the job's gpus");
  if (job.gpus > topology.hosts() * gpus_per_host) throw std::invalid_argument("the job needs more GPUs than the cluster has");
  if (p.tp > gpus_per_host || gpus_per_host % p.tp != 0)
    throw std::invalid_argument("tensor parallelism must fit inside a host (tp divides gpus_per_host)");
  ranks_.resize(static_cast<std::size_t>(job.gpus));
  for (int r = 0; r < job.gpus; ++r) {
    RankPlace& place = ranks_[static_cast<std::size_t>(r)];
    place.tp = r % p.tp;
    place.dp = (r / p.tp) % p.dp;
    place.pp = r / (p.tp * p.dp);
    place.host = r / gpus_per_host;
    place.gpu = r % gpus_per_host;
    place.endpoint = topology.endpoint(place.host, topology.nic_of_gpu(place.gpu));
  }
  hosts_used_ = (job.gpus + gpus_per_host - 1) / gpus_per_host;
  for (int j = 0; j < p.pp; ++j)
    for (int k = 0; k < p.tp; ++k) {
      DpGroup group;
      group.communicator = "dp.pp" + std::to_string(j) + ".tp" + std::to_string(k);
      for (int i = 0; i < p.dp; ++i) group.ranks.push_back(k + p.tp * (i + p.dp * j));
      dp_groups_.push_back(std::move(group));
    }
}

std::string Placement::worker_name(int r) const {
  return sim::ComponentId::make_gpu(rank(r).host, rank(r).gpu).str();
}

}  // namespace gauntlet::models
