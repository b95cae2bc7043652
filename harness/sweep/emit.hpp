#pragma once
// Cluster launchers for a sweep or a suite: each task runs one shard,
//   gauntlet sweep SWEEP.yaml --shard INDEX/N --out OUT      (or suite SUITE.yaml)
// into a results folder every task shares, and a gather step merges them,
//   gauntlet report OUT                                      (or the gather_args)
// which fails while cells are missing (sweep.json lists them all).
#include <cstddef>
#include <string>
#include <vector>

namespace gauntlet::harness {

struct EmitOptions {
  std::string subcommand = "sweep";      // what each task runs on sweep_path: sweep or suite
  std::vector<std::string> gather_args;  // the gather step's arguments; empty: report OUT
  std::string sweep_path;                // as the tasks will see it (relative to their working folder)
  std::string sweep_name;
  std::string out;  // results folder the tasks write to; absolute for Kubernetes
  std::size_t shards = 1;
  std::size_t cells = 0;            // for the comment
  std::string task_unit = "cells";  // what cells counts
  std::string binary = "gauntlet";  // as the tasks run it
  std::string cpus = "2";           // per task
  std::string memory = "4Gi";       // per task (Kubernetes quantity; Slurm gets the same in M)
  // Kubernetes only.
  std::string image = "gauntlet:latest";
  std::string working_dir = "/opt/gauntlet";  // where the image holds the sweep and scenario files
  std::string claim = "gauntlet-results";     // the ReadWriteMany claim mounted at `out`
  std::string storage = "20Gi";               // its size
  // Slurm only.
  std::string time_limit = "04:00:00";
};

// Why these options cannot be emitted (a line break in a path, a time limit
// that is not one), or empty. Emitted text quotes every value anyway; this
// refuses what quoting would still change. Both emitters throw
// std::invalid_argument with it rather than emit such options.
std::string emit_options_error(const EmitOptions& options);

// A PersistentVolumeClaim (ReadWriteMany), an Indexed Job (completions =
// parallelism = shards; pod k runs shard $(JOB_COMPLETION_INDEX)/shards)
// with the claim mounted at `out`, and a gather Job whose pod runs
// `gauntlet report out` and is retried until every cell is there.
std::string kubernetes_manifest(const EmitOptions& options);
// A Slurm array script (--array=0-(shards-1), --time, --mem) writing to
// `out` on the shared file system, and the gather step submitted after it
// (`--dependency=afterok` on the array).
std::string slurm_script(const EmitOptions& options);

// Memory as Slurm's --mem takes it (megabytes), from a Kubernetes quantity
// such as 4Gi, 512Mi or 2G; empty when it is not one.
std::string slurm_memory(const std::string& quantity);

}  // namespace gauntlet::harness
