#include "harness/cli/launcher_options.hpp"

#include <cstdio>
#include <filesystem>
#include <regex>

#include "harness/cli/commands.hpp"

namespace gauntlet::cli {

namespace po = boost::program_options;
namespace fs = std::filesystem;

bool check_jobs(std::size_t jobs) {
  if (jobs >= 1 && jobs <= kMaxJobs) return true;
  std::fprintf(stderr, "--jobs: must be from 1 to %zu\n", kMaxJobs);
  return false;
}

void add_launcher_options(po::options_description& options, LauncherChoice& c, const std::string& tasks) {
  options.add_options()("shard", po::value(&c.shard_text), "run only shard I of N (0-based): I/N")(
      "emit", po::value(&c.emit), "print a cluster launcher instead of running: k8s (Indexed Job) or slurm (array)")(
      "shards", po::value(&c.shards), ("with --emit: number of shards (default: one per " + tasks + ")").c_str())(
      "image", po::value(&c.launcher.image),
      "with --emit k8s: container image holding gauntlet (default gauntlet:latest)")(
      "binary", po::value(&c.launcher.binary), "with --emit: the gauntlet binary as tasks run it (default gauntlet)")(
      "cpus", po::value(&c.launcher.cpus), "with --emit: CPUs requested per task (default 2)")(
      "memory", po::value(&c.launcher.memory), "with --emit: memory per task, e.g. 4Gi (default 4Gi)")(
      "time", po::value(&c.launcher.time_limit), "with --emit slurm: time limit per task (default 04:00:00)")(
      "claim", po::value(&c.launcher.claim),
      "with --emit k8s: the ReadWriteMany claim's name (default gauntlet-results)")(
      "storage", po::value(&c.launcher.storage), "with --emit k8s: the claim's size (default 20Gi)")(
      "workdir", po::value(&c.launcher.working_dir),
      "with --emit k8s: where the image holds the input files (default /opt/gauntlet)");
}

bool parse_launcher_choice(const LauncherChoice& c, std::size_t& shard, std::size_t& shard_count) {
  shard = 0;
  shard_count = 1;
  if (!c.shard_text.empty()) {
    static const std::regex kShard(R"(^(\d{1,9})/(\d{1,9})$)");
    std::smatch m;
    if (std::regex_match(c.shard_text, m, kShard)) {
      shard = std::stoul(m[1]);
      shard_count = std::stoul(m[2]);
    }
    if (shard_count == 0 || shard >= shard_count || !std::regex_match(c.shard_text, kShard)) {
      std::fprintf(stderr, "--shard: expected I/N with 0 <= I < N, got '%s'\n", c.shard_text.c_str());
      return false;
    }
  }
  if (!c.emit.empty() && c.emit != "k8s" && c.emit != "slurm") {
    std::fprintf(stderr, "--emit: expected k8s or slurm, got '%s'\n", c.emit.c_str());
    return false;
  }
  return true;
}

int emit_launcher(LauncherChoice& c, const std::string& path, const std::string& name, std::size_t tasks,
                  const std::string& out_dir, const std::string& default_out, const GatherArgs& gather) {
  harness::EmitOptions& launcher = c.launcher;
  launcher.sweep_path = path;
  launcher.sweep_name = name;
  launcher.cells = tasks;
  launcher.shards = c.shards.value > 0 ? std::min<std::size_t>(c.shards.value, tasks) : tasks;
  if (c.emit == "k8s") {
    // Every pod mounts the shared claim at an absolute path and writes there.
    launcher.out = out_dir.empty() ? "/results/" + name : out_dir;
    if (!fs::path(launcher.out).is_absolute()) {
      std::fprintf(stderr,
                   "--out: with --emit k8s the results folder is the claim's mount point, an absolute path; got '%s'\n",
                   launcher.out.c_str());
      return kExitBadInput;
    }
  } else {
    // Every node sees the shared file system at the path the submitter sees.
    launcher.out = fs::absolute(out_dir.empty() ? default_out : out_dir).lexically_normal().string();
  }
  if (gather) launcher.gather_args = gather(launcher.out);
  if (const std::string error = harness::emit_options_error(launcher); !error.empty()) {
    std::fprintf(stderr, "--emit %s: %s\n", c.emit.c_str(), error.c_str());
    return kExitBadInput;
  }
  if (harness::slurm_memory(launcher.memory).empty()) {
    std::fprintf(stderr, "--memory: expected a quantity such as 4Gi, 512Mi or 8G, got '%s'\n", launcher.memory.c_str());
    return kExitBadInput;
  }
  std::printf("%s",
              (c.emit == "k8s" ? harness::kubernetes_manifest(launcher) : harness::slurm_script(launcher)).c_str());
  return kExitOk;
}

}  // namespace gauntlet::cli
