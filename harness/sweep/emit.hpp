#pragma once
// Cluster launchers for a sweep: each task runs one shard,
//   gauntlet sweep SWEEP.yaml --shard INDEX/N --out OUT
// and `gauntlet report OUT` merges the shards afterwards.
#include <cstddef>
#include <string>

namespace gauntlet::harness {

struct EmitOptions {
  std::string sweep_path;  // as the tasks will see it (relative to their working folder)
  std::string sweep_name;
  std::string out;         // results folder the tasks write to
  std::size_t shards = 1;
  std::size_t cells = 0;   // for the comment
  std::string image = "gauntlet:latest";  // Kubernetes only
  std::string working_dir = "/work";      // Kubernetes only: where the image holds the sweep files
};

// A Kubernetes Indexed Job: completions = parallelism = shards; pod k runs
// shard $(JOB_COMPLETION_INDEX)/shards.
std::string kubernetes_manifest(const EmitOptions& options);
// A Slurm array script: --array=0-(shards-1), task k runs shard
// $SLURM_ARRAY_TASK_ID/shards.
std::string slurm_script(const EmitOptions& options);

}  // namespace gauntlet::harness
