// gauntlet suite SUITE.yaml [--jobs N] [--shard I/N] [--emit k8s|slurm] [--out DIR] [--list]
//                           [--episode I] [--merge]
// gauntlet suite --compare A/summary.json B/summary.json
#include <unistd.h>

#include <boost/program_options.hpp>

#include <cstdio>
#include <iostream>
#include <optional>

#include "harness/cli/command_line.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/launcher_options.hpp"
#include "harness/runner/results_folder.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/suite/suite_report.hpp"
#include "harness/suite/suite_runner.hpp"

namespace gauntlet::cli {

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

void print_episode(const harness::Episode& e, const harness::SuiteSpec& spec) {
  std::string line =
      "e" + std::to_string(e.index) + " seed " + std::to_string(e.seed) + " " + spec.shapes[e.shape].name + " ";
  if (!e.fault) {
    line += "healthy";
  } else {
    line += e.fault->type + (e.fault->target.empty() ? "" : " " + e.fault->target) + " at " +
            std::to_string(e.fault->onset_ns / 1000000) + "ms";
    if (e.fault->duration_ns) line += " for " + std::to_string(*e.fault->duration_ns / 1000000) + "ms";
    for (const auto& [name, value] : e.fault->params) line += " " + name + "=" + value;
  }
  for (const harness::DrawnFault& b : e.background) line += " +" + b.type;
  std::printf("%s\n", line.c_str());
}

// Merges what is under spec.out, writes summary.json and report.html and
// prints the leaderboard.
int merge_and_report(const harness::SuiteSpec& spec, const harness::ResultsTree& tree, bool allow_detector_failure) {
  const harness::MergedSuite merged = harness::merge_episodes(spec, spec.out);
  if (!merged.missing.empty()) {
    std::fprintf(stderr, "gauntlet suite %s: %zu of %zu episodes have no record yet under %s; first missing: e%zu\n",
                 spec.name.c_str(), merged.missing.size(), merged.result.planned_episodes, spec.out.c_str(),
                 merged.missing.front());
    return kExitRunFailed;
  }
  tree.write_file("summary.json", harness::suite_summary_json(merged.result));
  tree.write_file("report.html", harness::suite_report_html(merged.result));
  std::printf("%s", harness::suite_leaderboard(merged.result).c_str());
  std::printf("summary: %s\nreport: %s\n", (spec.out / "summary.json").c_str(), (spec.out / "report.html").c_str());
  bool failed = false;
  for (const harness::DetectorFigures& d : merged.result.detectors) failed = failed || d.failed_episodes > 0;
  if (failed && !allow_detector_failure) {
    std::fprintf(stderr, "a detector failed in some episodes (--allow-detector-failure to accept)\n");
    return kExitRunFailed;
  }
  return kExitOk;
}

int compare(const std::vector<std::string>& files) {
  if (files.size() != 2) {
    std::fprintf(stderr, "--compare: give two summary.json files\n");
    return kExitBadInput;
  }
  const harness::SuiteResult a = harness::read_suite_summary(files[0]);
  const harness::SuiteResult b = harness::read_suite_summary(files[1]);
  std::printf("%s", harness::compare_suites(a, files[0], b, files[1]).c_str());
  return kExitOk;
}

// The command line of gauntlet suite, parsed.
struct SuiteCommandLine {
  std::string path, out_dir;
  LauncherChoice choice;
  UnsignedOption jobs{1}, episode{0};
  std::vector<std::string> compare_files;
  std::size_t shard = 0, shard_count = 1;
  po::variables_map vm;
};

// Returns the exit code when the command stops here (help, bad options, --compare).
std::optional<int> parse_suite_line(const Args& args, SuiteCommandLine& line) {
  po::options_description visible(
      "gauntlet suite SUITE.yaml [options]\ngauntlet suite --compare A/summary.json B/summary.json");
  visible.add_options()("help,h", "show this help")("jobs,j", po::value(&line.jobs),
                                                    "local worker processes (default 1)");
  add_launcher_options(visible, line.choice, "episode");
  visible.add_options()("out", po::value(&line.out_dir),
                        "results folder (default: the suite's out, results/suites/<name>)")(
      "list", "print the episodes and their count, run nothing")(
      "episode", po::value(&line.episode), "run episode I alone (as its record's reproduce command does)")(
      "merge", "only merge the episodes' records already under --out (after shards)")(
      "compare", po::value(&line.compare_files)->multitoken(), "A/summary.json B/summary.json: paired significance")(
      "allow-detector-failure", "exit 0 even when a detector failed in some episode")("no-progress",
                                                                                      "no progress on stderr");
  po::options_description all;
  all.add(visible).add_options()("suite", po::value(&line.path));
  po::positional_options_description positional;
  positional.add("suite", 1);
  if (const int stop = parse_options(args, visible, all, &positional, line.vm); stop >= 0) return stop;
  if (line.vm.count("compare")) return compare(line.compare_files);
  if (line.path.empty()) {
    std::fprintf(stderr, "gauntlet suite: missing SUITE.yaml\n");
    return kExitBadInput;
  }
  if (!parse_launcher_choice(line.choice, line.shard, line.shard_count) || !check_jobs(line.jobs.value))
    return kExitBadInput;
  return std::nullopt;
}

// What part of the folder this invocation writes: one episode, one shard,
// or the whole suite (a run or a merge).
std::string suite_share(const SuiteCommandLine& line) {
  if (line.vm.count("merge")) return "";
  if (line.vm.count("episode")) return "episode-" + std::to_string(line.episode.value);
  if (line.shard_count > 1) return "shard-" + std::to_string(line.shard) + "-of-" + std::to_string(line.shard_count);
  return "";
}

int run_one_episode(const SuiteCommandLine& line, const harness::SuiteSpec& spec,
                    const std::vector<harness::Episode>& episodes, const harness::DetectorRegistry& registry) {
  const std::size_t index = line.episode.value;
  if (index >= episodes.size()) {
    std::fprintf(stderr, "--episode: the suite has episodes 0 to %zu\n", episodes.size() - 1);
    return kExitBadInput;
  }
  const fs::path folder = harness::episode_folder(spec.out, index);
  harness::EpisodeRecord record;
  const int code = harness::run_episode(spec, episodes[index], registry, folder, 2, &record);
  if (code != harness::kWorkerOk) return code;
  std::printf("%s\nresults: %s\n", harness::record_json(record).dump(2).c_str(), folder.c_str());
  return kExitOk;
}

// Runs this shard's episodes, then merges when the whole suite ran here.
int run_suite_here(const SuiteCommandLine& line, const harness::SuiteSpec& spec, const harness::ResultsTree& tree,
                   const std::vector<harness::Episode>& episodes, const harness::DetectorRegistry& registry) {
  std::vector<harness::Episode> mine;
  for (const harness::Episode& e : episodes)
    if (e.index % line.shard_count == line.shard) mine.push_back(e);
  std::fprintf(stderr, "gauntlet suite %s v%llu: %zu episodes", spec.name.c_str(),
               static_cast<unsigned long long>(spec.version), episodes.size());
  if (line.shard_count > 1) std::fprintf(stderr, ", shard %zu/%zu runs %zu", line.shard, line.shard_count, mine.size());
  std::fprintf(stderr, ", %llu workers, results in %s\n", line.jobs.value, spec.out.c_str());
  harness::WorkerPoolResult result;
  try {
    result = harness::run_episodes(spec, mine, registry, line.jobs.value,
                                   {static_cast<bool>(::isatty(STDERR_FILENO)), line.vm.count("no-progress") > 0});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gauntlet suite: %s\n", e.what());
    return kExitRunFailed;
  }
  if (result.bad_input > 0) {
    std::fprintf(stderr, "gauntlet suite: %zu of %zu episodes found bad input; no merged summary\n", result.bad_input,
                 mine.size());
    return kExitBadInput;
  }
  if (line.shard_count > 1) {
    std::printf(
        "shard %zu/%zu: %zu episodes done, %zu failed; merge all shards with: gauntlet suite %s --merge --out %s\n",
        line.shard, line.shard_count, result.done, result.failed, line.path.c_str(), spec.out.c_str());
    return result.failed > 0 ? kExitRunFailed : kExitOk;
  }
  const int code = merge_and_report(spec, tree, line.vm.count("allow-detector-failure") > 0);
  return result.failed > 0 ? kExitRunFailed : code;
}

}  // namespace

int suite_command(const Args& args) {
  SuiteCommandLine line;
  harness::SuiteSpec spec;
  const harness::DetectorRegistry registry = harness::builtin_detectors();
  try {
    if (const std::optional<int> stop = parse_suite_line(args, line)) return *stop;
    spec = harness::load_suite(line.path, registry);
  } catch (const harness::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kExitBadInput;
  }
  if (!line.out_dir.empty()) spec.out = line.out_dir;
  const std::vector<harness::Episode> episodes = harness::expand_episodes(spec);
  if (line.vm.count("list")) {
    for (const harness::Episode& e : episodes) print_episode(e, spec);
    std::printf("%zu episodes (%zu healthy)\n", episodes.size(), spec.healthy_episodes);
    return kExitOk;
  }
  line.choice.launcher.subcommand = "suite";
  line.choice.launcher.task_unit = "episodes";
  if (!line.choice.emit.empty())
    return emit_launcher(line.choice, line.path, spec.name, episodes.size(), line.out_dir, spec.out.string(),
                         [&](const std::string& out) {
                           return std::vector<std::string>{"suite", line.path, "--merge", "--out", out};
                         });
  // Checked and locked before any episode runs.
  std::optional<harness::ResultsTree> tree;
  try {
    tree.emplace(harness::ResultsTree::claim(spec.out, suite_share(line)));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gauntlet suite: --out %s: %s\n", spec.out.c_str(), e.what());
    return kExitBadInput;
  }
  try {
    if (line.vm.count("merge")) return merge_and_report(spec, *tree, line.vm.count("allow-detector-failure") > 0);
    if (line.vm.count("episode")) return run_one_episode(line, spec, episodes, registry);
    return run_suite_here(line, spec, *tree, episodes, registry);
  } catch (const harness::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gauntlet suite: cannot write the summary: %s\n", e.what());
    return kExitRunFailed;
  }
}

}  // namespace gauntlet::cli
