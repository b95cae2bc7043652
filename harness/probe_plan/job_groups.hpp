#pragma once
// The communication groups of a job as RNIC endpoint sets: what a skeleton
// prober would infer from the job's traffic, taken here from its placement
// for planning ahead of a run.
#include <vector>

#include "models/job_spec.hpp"
#include "sim/network_engine.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness {

// One group per data-parallel communicator that crosses hosts (in ring
// order, each RNIC once); throws std::invalid_argument if the job does not fit.
std::vector<std::vector<sim::EndpointId>> job_groups(const models::JobSpec& job, const sim::Topology& topology);

}  // namespace gauntlet::harness
