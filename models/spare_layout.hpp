#pragma once
// Where a job's spare hosts sit and which spare refills a broken host's slot.
//   tail:    the job fills hosts 0..n-1, its spares are the next hosts
//            (typically a pod of their own);
//   per_pod: the spares are spread over the pods the job and its spares
//            occupy (the last hosts of each pod), and a broken host is
//            replaced from its own pod first, then from the nearest pod, so
//            the re-placed job keeps its traffic under the same leaves (C4's
//            setting: a few spare nodes in every group of 128).
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/job_spec.hpp"
#include "sim/topology.hpp"

namespace gauntlet::models {

struct HostPlan {
  std::vector<int> job_hosts;  // physical host per slot, ascending
  std::vector<int> spares;     // ascending
};

// A job with hosts of its own (JobSpec::hosts) keeps them and its spares.
// per_pod throws std::invalid_argument when the job and its spares do not fit.
HostPlan plan_hosts(const JobSpec& job, const sim::Topology& topology);

// Index into `pool` of the usable spare that refills `broken_host`'s slot,
// or nothing when no spare is usable.
std::optional<std::size_t> pick_spare(const std::vector<int>& pool, int broken_host, const sim::Topology& topology,
                                      SpareLayout layout, const std::function<bool(int)>& usable);

std::optional<SpareLayout> spare_layout_from_name(const std::string& name);

}  // namespace gauntlet::models
