#include "models/placement.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "sim/component_id.hpp"

namespace gauntlet::models {
namespace {

std::vector<int> first_hosts(const JobSpec& job, const sim::Topology& topology) {
  std::vector<int> hosts(static_cast<std::size_t>(Placement::hosts_needed(job, topology)));
  std::iota(hosts.begin(), hosts.end(), 0);
  return hosts;
}

}  // namespace

int Placement::hosts_needed(const JobSpec& job, const sim::Topology& topology) {
  const int per_host = topology.shape().gpus_per_host;
  return (job.gpus + per_host - 1) / per_host;
}

Placement::Placement(const JobSpec& job, const sim::Topology& topology)
    : Placement(job, topology, first_hosts(job, topology)) {}

Placement::Placement(const JobSpec& job, const sim::Topology& topology, const std::vector<int>& hosts) : hosts_(hosts) {
  const ParallelismSpec& p = job.parallelism;
  const int gpus_per_host = topology.shape().gpus_per_host;
  if (p.tp < 1 || p.pp < 1 || p.dp < 1 || p.ep < 1) throw std::invalid_argument("parallel degrees must be positive");
  if (p.tp * p.pp * p.dp != job.gpus) throw std::invalid_argument("tp * pp * dp must equal the job's gpus");
  if (p.dp % p.ep != 0) throw std::invalid_argument("ep must divide dp");
  if (job.gpus > topology.hosts() * gpus_per_host)
    throw std::invalid_argument("the job needs more GPUs than the cluster has");
  if (p.tp > gpus_per_host || gpus_per_host % p.tp != 0)
    throw std::invalid_argument("tensor parallelism must fit inside a host (tp divides gpus_per_host)");
  if (static_cast<int>(hosts_.size()) != hosts_needed(job, topology))
    throw std::invalid_argument("a placement needs one host per slot");
  std::vector<int> sorted = hosts_;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end() || sorted.front() < 0 ||
      sorted.back() >= topology.hosts())
    throw std::invalid_argument("a placement's hosts must be distinct hosts of the cluster");

  ranks_.resize(static_cast<std::size_t>(job.gpus));
  for (int r = 0; r < job.gpus; ++r) {
    RankPlace& place = ranks_[static_cast<std::size_t>(r)];
    place.tp = r % p.tp;
    place.dp = (r / p.tp) % p.dp;
    place.pp = r / (p.tp * p.dp);
    place.host = hosts_[static_cast<std::size_t>(r / gpus_per_host)];
    place.gpu = r % gpus_per_host;
    place.endpoint = topology.endpoint(place.host, topology.nic_of_gpu(place.gpu));
  }
  auto rank_of = [&](int tp, int dp, int pp) { return tp + p.tp * (dp + p.dp * pp); };
  for (int j = 0; j < p.pp; ++j)
    for (int k = 0; k < p.tp; ++k) {
      DpGroup group;
      group.communicator = "dp.pp" + std::to_string(j) + ".tp" + std::to_string(k);
      for (int i = 0; i < p.dp; ++i) group.ranks.push_back(rank_of(k, i, j));
      dp_groups_.push_back(std::move(group));
      // Expert parallelism splits each data-parallel group into blocks of ep.
      if (p.ep > 1)
        for (int e = 0; e < p.dp / p.ep; ++e) {
          DpGroup ep;
          ep.communicator = "ep.pp" + std::to_string(j) + ".tp" + std::to_string(k) + ".g" + std::to_string(e);
          for (int i = 0; i < p.ep; ++i) ep.ranks.push_back(rank_of(k, e * p.ep + i, j));
          ep_groups_.push_back(std::move(ep));
        }
    }
  if (p.tp > 1)
    for (int j = 0; j < p.pp; ++j)
      for (int i = 0; i < p.dp; ++i) {
        DpGroup group;
        group.communicator = "tp.pp" + std::to_string(j) + ".dp" + std::to_string(i);
        for (int k = 0; k < p.tp; ++k) group.ranks.push_back(rank_of(k, i, j));
        tp_groups_.push_back(std::move(group));
      }
  for (int j = 0; j + 1 < p.pp; ++j)
    for (int i = 0; i < p.dp; ++i)
      for (int k = 0; k < p.tp; ++k)
        pipeline_edges_.push_back(
            {"pp.dp" + std::to_string(i) + ".tp" + std::to_string(k), j, rank_of(k, i, j), rank_of(k, i, j + 1)});
}

bool Placement::uses_host(int host) const { return std::find(hosts_.begin(), hosts_.end(), host) != hosts_.end(); }

std::string Placement::worker_name(int r) const { return sim::ComponentId::make_gpu(rank(r).host, rank(r).gpu).str(); }

}  // namespace gauntlet::models
