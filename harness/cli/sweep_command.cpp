// gauntlet sweep SWEEP.yaml [--jobs N] [--shard I/N] [--emit k8s|slurm] [--shards N] [--out DIR], and the
// same machinery under commands that add a step after the merge (gauntlet plan capacity).
#include <unistd.h>

#include <boost/program_options.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include "harness/cli/command_line.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/launcher_options.hpp"
#include "harness/cli/sweep_runner.hpp"
#include "harness/cli/unsigned_option.hpp"
#include "harness/report/aggregate.hpp"
#include "harness/runner/results_folder.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/sweep/local_runner.hpp"
#include "harness/sweep/sweep_spec.hpp"

namespace gauntlet::cli {

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

// The command line of a sweep-like command, parsed.
struct SweepCommandLine {
  std::string path, out_dir;
  LauncherChoice choice;
  UnsignedOption jobs{1};
  std::size_t shard = 0, shard_count = 1;
  po::variables_map vm;
  bool gather_only() const { return vm.count("gather") > 0; }
};

// Returns the exit code when the command stops here (help, bad options).
std::optional<int> parse_sweep_line(const Args& args, const SweepFlavour& flavour, SweepCommandLine& line) {
  po::options_description visible(flavour.command + " " + flavour.file_label + " [options]");
  visible.add_options()("help,h", "show this help")("jobs,j", po::value(&line.jobs),
                                                    "local worker processes (default 1)");
  add_launcher_options(visible, line.choice, "cell");
  visible.add_options()(
      "out", po::value(&line.out_dir),
      "results folder (default: the sweep's out; with --emit k8s /results/<sweep>, the claim's mount point)")(
      "allow-detector-failure", "exit 0 even when a detector failed in some cell")("no-progress",
                                                                                   "no progress on stderr");
  if (flavour.add_options) flavour.add_options(visible);
  po::options_description all;
  all.add(visible).add_options()("sweep", po::value(&line.path));
  po::positional_options_description positional;
  positional.add("sweep", 1);
  if (const int stop = parse_options(args, visible, all, &positional, line.vm); stop >= 0) return stop;
  if (line.path.empty()) {
    std::fprintf(stderr, "%s: missing %s\n", flavour.command.c_str(), flavour.file_label.c_str());
    return kExitBadInput;
  }
  if (!parse_launcher_choice(line.choice, line.shard, line.shard_count)) return kExitBadInput;
  if (!check_jobs(line.jobs.value)) return kExitBadInput;
  return std::nullopt;
}

// Writes the plan of every cell (so that a merge can say which are missing)
// and runs this shard's; returns the exit code when the command stops here.
std::optional<int> run_shard(const SweepCommandLine& line, const char* command, const harness::SweepSpec& spec,
                             const harness::ResultsTree& tree, const std::vector<harness::SweepCell>& cells,
                             const harness::DetectorRegistry& registry, harness::SweepRunResult& result) {
  const std::vector<harness::SweepCell> mine = harness::shard_cells(cells, line.shard, line.shard_count);
  try {
    std::vector<std::string> planned;
    for (const harness::SweepCell& cell : cells)
      planned.push_back(harness::cell_folder(spec, cell).lexically_relative(spec.out).string());
    tree.write_file("sweep.json", harness::sweep_plan_json(spec.name, planned));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: cannot write %s: %s\n", command, (spec.out / "sweep.json").c_str(), e.what());
    return kExitRunFailed;
  }
  harness::SweepRunOptions options;
  options.jobs = line.jobs.value;
  options.quiet = line.vm.count("no-progress") > 0;
  options.progress_bar = ::isatty(STDERR_FILENO);
  std::fprintf(stderr, "%s %s: %zu cells", command, spec.name.c_str(), cells.size());
  if (line.shard_count > 1) std::fprintf(stderr, ", shard %zu/%zu runs %zu", line.shard, line.shard_count, mine.size());
  std::fprintf(stderr, ", %llu workers, results in %s\n", line.jobs.value, spec.out.c_str());
  try {
    result = harness::run_cells(spec, mine, registry, options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", command, e.what());
    return kExitRunFailed;
  }
  if (result.bad_input == 0) return std::nullopt;
  // Each such cell printed its position; a merged report would hide the gap.
  std::fprintf(stderr, "%s: %zu of %zu cells found bad input; no merged report\n", command, result.bad_input,
               mine.size());
  return kExitBadInput;
}

// The whole sweep ran here (or every shard is done): merges it, prints the
// table or the flavour's analysis and writes report.html.
int merge_sweep(const SweepCommandLine& line, const SweepFlavour& flavour, const harness::SweepSpec& spec,
                const harness::ResultsTree& tree, const harness::DetectorRegistry& registry) {
  try {
    const harness::Aggregate aggregate = harness::aggregate_runs({spec.out});
    const bool incomplete = merged_runs_status(aggregate, line.vm.count("allow-detector-failure") > 0) != kExitOk;
    std::string sections;
    int status = kExitOk;
    // Incomplete (cells missing or a detector failed), the table is still
    // printed as an interim answer; the exit code says it is not final.
    if (!flavour.after_merge)
      std::printf("%s", harness::aggregate_table(aggregate).c_str());
    else
      status = flavour.after_merge(spec, aggregate, registry, line.vm, sections);
    tree.write_file("report.html",
                    harness::aggregate_report_html(aggregate, flavour.command + " " + spec.name, sections));
    std::printf("report: %s\n", (spec.out / "report.html").c_str());
    return incomplete ? kExitRunFailed : status;
  } catch (const harness::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: cannot write the report: %s\n", flavour.command.c_str(), e.what());
    return kExitRunFailed;
  }
}

}  // namespace

int sweep_command(const Args& args) { return run_sweep(args, SweepFlavour{}); }

int run_sweep(const Args& args, const SweepFlavour& flavour) {
  const char* const command = flavour.command.c_str();
  SweepCommandLine line;
  if (const std::optional<int> stop = parse_sweep_line(args, flavour, line)) return *stop;
  const harness::DetectorRegistry registry = harness::builtin_detectors();
  harness::SweepSpec spec;
  try {
    spec = harness::load_sweep(line.path, registry);
  } catch (const harness::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kExitBadInput;
  }
  if (!line.out_dir.empty()) spec.out = line.out_dir;
  const std::vector<harness::SweepCell> cells = harness::expand_cells(spec);
  if (!line.choice.emit.empty()) {
    GatherArgs gather;
    if (flavour.gather_args) gather = [&](const std::string& out) { return flavour.gather_args(line.path, out); };
    return emit_launcher(line.choice, line.path, spec.name, cells.size(), line.out_dir, spec.out.string(), gather);
  }
  // Checked and locked before any cell runs: shards share the folder, a
  // whole sweep or a merge has it alone.
  const bool sharded = line.shard_count > 1 && !line.gather_only();
  std::optional<harness::ResultsTree> tree;
  try {
    tree.emplace(harness::ResultsTree::claim(
        spec.out, sharded ? "shard-" + std::to_string(line.shard) + "-of-" + std::to_string(line.shard_count) : ""));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: --out %s: %s\n", command, spec.out.c_str(), e.what());
    return kExitBadInput;
  }
  harness::SweepRunResult result;
  if (!line.gather_only())
    if (const std::optional<int> stop = run_shard(line, command, spec, *tree, cells, registry, result)) return *stop;
  if (sharded) {
    std::printf("shard %zu/%zu: %zu cells done, %zu failed; merge all shards with: %s\n", line.shard, line.shard_count,
                result.done, result.failed, flavour.gather_hint(line.path, spec.out.string()).c_str());
    return result.failed > 0 ? kExitRunFailed : kExitOk;
  }
  const int merged = merge_sweep(line, flavour, spec, *tree, registry);
  if (merged != kExitOk) return merged;
  return result.failed > 0 ? kExitRunFailed : kExitOk;
}

}  // namespace gauntlet::cli
