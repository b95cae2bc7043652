#include "harness/probe_plan/job_groups.hpp"

#include <algorithm>

#include "models/placement.hpp"

namespace gauntlet::harness {

std::vector<std::vector<sim::EndpointId>> job_groups(const models::JobSpec& job, const sim::Topology& topology) {
  // A job sharing the cluster runs on the hosts it names; a job alone from the first.
  const models::Placement placement =
      job.hosts.empty() ? models::Placement(job, topology) : models::Placement(job, topology, job.hosts);
  std::vector<std::vector<sim::EndpointId>> out;
  for (const models::DpGroup& group : placement.dp_groups()) {
    std::vector<sim::EndpointId> endpoints;
    for (int r : group.ranks) {
      const sim::EndpointId e = placement.rank(r).endpoint;
      if (std::find(endpoints.begin(), endpoints.end(), e) == endpoints.end()) endpoints.push_back(e);
    }
    if (endpoints.size() > 1) out.push_back(std::move(endpoints));
  }
  return out;
}

}  // namespace gauntlet::harness
