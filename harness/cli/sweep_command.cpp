// gauntlet sweep SWEEP.yaml [--jobs N] [--shard I/N] [--emit k8s|slurm] [--shards N] [--out DIR], and the
// same machinery under commands that add a step after the merge (gauntlet plan capacity).
#include <unistd.h>

#include <boost/program_options.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "harness/cli/command_line.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/launcher_options.hpp"
#include "harness/cli/sweep_runner.hpp"
#include "harness/cli/unsigned_option.hpp"
#include "harness/report/aggregate.hpp"
#include "harness/report/json_file.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/sweep/local_runner.hpp"
#include "harness/sweep/sweep_spec.hpp"

namespace gauntlet::cli {

namespace po = boost::program_options;
namespace fs = std::filesystem;

int sweep_command(const Args& args) { return run_sweep(args, SweepFlavour{}); }

int run_sweep(const Args& args, const SweepFlavour& flavour) {
  const char* const command = flavour.command.c_str();
  po::options_description visible(flavour.command + " " + flavour.file_label + " [options]");
  std::string path, out_dir;
  LauncherChoice choice;
  UnsignedOption jobs_option{1};
  visible.add_options()("help,h", "show this help")("jobs,j", po::value(&jobs_option),
                                                    "local worker processes (default 1)");
  add_launcher_options(visible, choice, "cell");
  visible.add_options()(
      "out", po::value(&out_dir),
      "results folder (default: the sweep's out; with --emit k8s /results/<sweep>, the claim's mount point)")(
      "allow-detector-failure", "exit 0 even when a detector failed in some cell")("no-progress",
                                                                                   "no progress on stderr");
  if (flavour.add_options) flavour.add_options(visible);
  po::options_description all;
  all.add(visible).add_options()("sweep", po::value(&path));
  po::positional_options_description positional;
  positional.add("sweep", 1);
  po::variables_map vm;
  if (const int stop = parse_options(args, visible, all, &positional, vm); stop >= 0) return stop;
  const std::size_t jobs = jobs_option.value;
  if (path.empty()) {
    std::fprintf(stderr, "%s: missing %s\n", command, flavour.file_label.c_str());
    return kExitBadInput;
  }
  std::size_t shard = 0, shard_count = 1;
  if (!parse_launcher_choice(choice, shard, shard_count)) return kExitBadInput;
  if (!check_jobs(jobs)) return kExitBadInput;

  const harness::DetectorRegistry registry = harness::builtin_detectors();
  harness::SweepSpec spec;
  try {
    spec = harness::load_sweep(path, registry);
  } catch (const harness::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kExitBadInput;
  }
  if (!out_dir.empty()) spec.out = out_dir;
  const std::vector<harness::SweepCell> cells = harness::expand_cells(spec);

  if (!choice.emit.empty()) {
    GatherArgs gather;
    if (flavour.gather_args) gather = [&](const std::string& out) { return flavour.gather_args(path, out); };
    return emit_launcher(choice, path, spec.name, cells.size(), out_dir, spec.out.string(), gather);
  }

  const bool gather_only = vm.count("gather") > 0;
  const std::vector<harness::SweepCell> mine = harness::shard_cells(cells, shard, shard_count);
  harness::SweepRunResult result;
  if (!gather_only) {
    // The plan of every cell, so that a merge can say which are missing.
    try {
      std::vector<std::string> planned;
      for (const harness::SweepCell& cell : cells)
        planned.push_back(harness::cell_folder(spec, cell).lexically_relative(spec.out).string());
      fs::create_directories(spec.out);
      harness::write_file_atomically(spec.out / "sweep.json", harness::sweep_plan_json(spec.name, planned));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: cannot write %s: %s\n", command, (spec.out / "sweep.json").c_str(), e.what());
      return kExitRunFailed;
    }
    harness::SweepRunOptions options;
    options.jobs = jobs;
    options.quiet = vm.count("no-progress") > 0;
    options.progress_bar = ::isatty(STDERR_FILENO);
    std::fprintf(stderr, "%s %s: %zu cells", command, spec.name.c_str(), cells.size());
    if (shard_count > 1) std::fprintf(stderr, ", shard %zu/%zu runs %zu", shard, shard_count, mine.size());
    std::fprintf(stderr, ", %zu workers, results in %s\n", jobs, spec.out.c_str());
    try {
      result = harness::run_cells(spec, mine, registry, options);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", command, e.what());
      return kExitRunFailed;
    }
    if (result.bad_input > 0) {
      // Each such cell printed its position; a merged report would hide the gap.
      std::fprintf(stderr, "%s: %zu of %zu cells found bad input; no merged report\n", command, result.bad_input,
                   mine.size());
      return kExitBadInput;
    }
  }
  if (shard_count == 1 || gather_only) {
    // The whole sweep ran here (or every shard is done): merge it right away.
    try {
      const harness::Aggregate aggregate = harness::aggregate_runs({spec.out});
      const bool incomplete = merged_runs_status(aggregate, vm.count("allow-detector-failure") > 0) != kExitOk;
      std::string sections;
      int status = kExitOk;
      if (!flavour.after_merge)
        std::printf("%s", harness::aggregate_table(aggregate).c_str());
      else if (!(gather_only && incomplete))
        status = flavour.after_merge(spec, aggregate, registry, vm, sections);
      harness::write_file_atomically(
          spec.out / "report.html",
          harness::aggregate_report_html(aggregate, flavour.command + " " + spec.name, sections));
      std::printf("report: %s\n", (spec.out / "report.html").c_str());
      if (incomplete) return kExitRunFailed;
      if (status != kExitOk) return status;
    } catch (const harness::InputError& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return kExitBadInput;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: cannot write the report: %s\n", command, e.what());
      return kExitRunFailed;
    }
  } else {
    std::printf("shard %zu/%zu: %zu cells done, %zu failed; merge all shards with: %s\n", shard, shard_count,
                result.done, result.failed, flavour.gather_hint(path, spec.out.string()).c_str());
  }
  return result.failed > 0 ? kExitRunFailed : kExitOk;
}

}  // namespace gauntlet::cli
