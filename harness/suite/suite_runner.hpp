#pragma once
// Runs a suite's episodes on local worker processes (the sweep's worker
// pool) and merges their records. Each episode writes its run's files and
// its record, episode.json, to <out>/episodes/e<index>/; the merge reads the
// records of the planned episodes back, so shards run anywhere and merge
// where their folders meet.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/detectors/registry.hpp"
#include "harness/sweep/worker_pool.hpp"
#include "harness/suite/suite_aggregate.hpp"

namespace gauntlet::harness {

std::filesystem::path episode_folder(const std::filesystem::path& out, std::size_t index);

// Runs one episode in this process and writes its folder; returns its
// worker exit code, and its record when it ran.
int run_episode(const SuiteSpec& spec, const Episode& episode, const DetectorRegistry& registry,
                const std::filesystem::path& folder, int parallel_runs, EpisodeRecord* record = nullptr);

WorkerPoolResult run_episodes(const SuiteSpec& spec, const std::vector<Episode>& episodes,
                              const DetectorRegistry& registry, std::size_t jobs, const ProgressOptions& progress);

struct MergedSuite {
  SuiteResult result;
  std::vector<std::size_t> missing;  // planned episodes without a record (or with another suite's)
};

// Reads every planned episode's record under out. Throws InputError on a
// record that is not valid JSON.
MergedSuite merge_episodes(const SuiteSpec& spec, const std::filesystem::path& out);

}  // namespace gauntlet::harness
