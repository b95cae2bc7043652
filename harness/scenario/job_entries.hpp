#pragma once
// The training jobs of a scenario: `job:` for a job alone on the cluster, or
// `jobs:` for tenants sharing it, each on hosts of its own.
#include <vector>

#include "harness/scenario/yaml_read.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness::detail {

// One job entry, checked against the cluster it runs on; `hosts:` only for
// one of `jobs:` (beside_others).
JobSpec read_job(const yaml_read::Source& source, const yaml_read::Field& job, const sim::ClusterShape& cluster,
                 bool beside_others);

// The `jobs:` list, every tenant placed: the hosts it names (`hosts: [h0,
// h4]`) or else the lowest-numbered hosts no tenant holds, then its
// spare_hosts spares, the lowest-numbered free hosts after that, in file
// order. Names are unique and placements never overlap.
std::vector<JobSpec> read_jobs(const yaml_read::Source& source, const yaml_read::Field& jobs,
                               const sim::ClusterShape& cluster);

}  // namespace gauntlet::harness::detail
