#include "models/spare_layout.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "models/placement.hpp"

namespace gauntlet::models {
namespace {

int hosts_per_pod(const sim::Topology& topology) {
  int n = 1;
  while (n < topology.hosts() && topology.pod_of_host(n) == 0) ++n;
  return n;
}

}  // namespace

HostPlan plan_hosts(const JobSpec& job, const sim::Topology& topology) {
  if (!job.hosts.empty()) return {job.hosts, job.spares};  // placed beside other jobs
  const int needed = Placement::hosts_needed(job, topology);
  HostPlan plan;
  if (job.spare_layout == SpareLayout::tail) {
    // Spares past the cluster's last host are simply not there.
    for (int h = 0; h < needed; ++h) plan.job_hosts.push_back(h);
    for (int h = needed; h < std::min(topology.hosts(), needed + job.spare_hosts); ++h) plan.spares.push_back(h);
    return plan;
  }
  if (needed + job.spare_hosts > topology.hosts())
    throw std::invalid_argument("the job and its spares need more hosts than the cluster has");
  const int per_pod = hosts_per_pod(topology);
  const int pods = (needed + job.spare_hosts + per_pod - 1) / per_pod;
  for (int pod = 0; pod < pods; ++pod) {
    const int spares_here = job.spare_hosts / pods + (pod < job.spare_hosts % pods ? 1 : 0);
    const int first = pod * per_pod;
    const int last = std::min(topology.hosts(), first + per_pod);  // one past
    for (int h = first; h < last - spares_here; ++h)
      if (static_cast<int>(plan.job_hosts.size()) < needed) plan.job_hosts.push_back(h);
    for (int h = std::max(first, last - spares_here); h < last; ++h) plan.spares.push_back(h);
  }
  if (static_cast<int>(plan.job_hosts.size()) < needed)
    throw std::invalid_argument("the job's pods cannot hold it once their spares are set aside");
  return plan;
}

std::optional<std::size_t> pick_spare(const std::vector<int>& pool, int broken_host, const sim::Topology& topology,
                                      SpareLayout layout, const std::function<bool(int)>& usable) {
  std::optional<std::size_t> best;
  int best_distance = 0;
  const int home = topology.pod_of_host(broken_host);
  for (std::size_t i = 0; i < pool.size(); ++i) {
    if (!usable(pool[i])) continue;
    // tail: the lowest-numbered usable spare; per_pod: the nearest pod wins,
    // ties to the lower host number.
    const int distance = layout == SpareLayout::per_pod ? std::abs(topology.pod_of_host(pool[i]) - home) : 0;
    if (!best || distance < best_distance || (distance == best_distance && pool[i] < pool[*best])) {
      best = i;
      best_distance = distance;
    }
  }
  return best;
}

std::optional<SpareLayout> spare_layout_from_name(const std::string& name) {
  if (name == "tail") return SpareLayout::tail;
  if (name == "per_pod") return SpareLayout::per_pod;
  return std::nullopt;
}

}  // namespace gauntlet::models
