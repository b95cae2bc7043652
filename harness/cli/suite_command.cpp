// gauntlet suite SUITE.yaml [--jobs N] [--shard I/N] [--emit k8s|slurm] [--out DIR] [--list]
//                           [--episode I] [--merge]
// gauntlet suite --compare A/summary.json B/summary.json
#include <unistd.h>

#include <boost/program_options.hpp>

#include <cstdio>
#include <iostream>

#include "harness/cli/command_line.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/launcher_options.hpp"
#include "harness/report/json_file.hpp"
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
int merge_and_report(const harness::SuiteSpec& spec, bool allow_detector_failure) {
  const harness::MergedSuite merged = harness::merge_episodes(spec, spec.out);
  if (!merged.missing.empty()) {
    std::fprintf(stderr, "gauntlet suite %s: %zu of %zu episodes have no record yet under %s; first missing: e%zu\n",
                 spec.name.c_str(), merged.missing.size(), merged.result.planned_episodes, spec.out.c_str(),
                 merged.missing.front());
    return kExitRunFailed;
  }
  harness::write_file_atomically(spec.out / "summary.json", harness::suite_summary_json(merged.result));
  harness::write_file_atomically(spec.out / "report.html", harness::suite_report_html(merged.result));
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

}  // namespace

int suite_command(const Args& args) {
  po::options_description visible(
      "gauntlet suite SUITE.yaml [options]\ngauntlet suite --compare A/summary.json B/summary.json");
  std::string path, out_dir;
  LauncherChoice choice;
  UnsignedOption jobs_option{1}, episode_option{0};
  std::vector<std::string> compare_files;
  visible.add_options()("help,h", "show this help")("jobs,j", po::value(&jobs_option),
                                                    "local worker processes (default 1)");
  add_launcher_options(visible, choice, "episode");
  visible.add_options()("out", po::value(&out_dir), "results folder (default: the suite's out, results/suites/<name>)")(
      "list", "print the episodes and their count, run nothing")(
      "episode", po::value(&episode_option), "run episode I alone (as its record's reproduce command does)")(
      "merge", "only merge the episodes' records already under --out (after shards)")(
      "compare", po::value(&compare_files)->multitoken(), "A/summary.json B/summary.json: paired significance")(
      "allow-detector-failure", "exit 0 even when a detector failed in some episode")("no-progress",
                                                                                      "no progress on stderr");
  po::options_description all;
  all.add(visible).add_options()("suite", po::value(&path));
  po::positional_options_description positional;
  positional.add("suite", 1);
  po::variables_map vm;
  if (const int stop = parse_options(args, visible, all, &positional, vm); stop >= 0) return stop;
  try {
    if (vm.count("compare")) return compare(compare_files);
  } catch (const harness::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kExitBadInput;
  }
  if (path.empty()) {
    std::fprintf(stderr, "gauntlet suite: missing SUITE.yaml\n");
    return kExitBadInput;
  }
  std::size_t shard = 0, shard_count = 1;
  if (!parse_launcher_choice(choice, shard, shard_count) || !check_jobs(jobs_option.value)) return kExitBadInput;

  const harness::DetectorRegistry registry = harness::builtin_detectors();
  harness::SuiteSpec spec;
  try {
    spec = harness::load_suite(path, registry);
  } catch (const harness::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kExitBadInput;
  }
  if (!out_dir.empty()) spec.out = out_dir;
  const std::vector<harness::Episode> episodes = harness::expand_episodes(spec);

  if (vm.count("list")) {
    for (const harness::Episode& e : episodes) print_episode(e, spec);
    std::printf("%zu episodes (%zu healthy)\n", episodes.size(), spec.healthy_episodes);
    return kExitOk;
  }
  choice.launcher.subcommand = "suite";
  choice.launcher.task_unit = "episodes";
  if (!choice.emit.empty())
    return emit_launcher(choice, path, spec.name, episodes.size(), out_dir, spec.out.string(),
                         [&](const std::string& out) {
                           return std::vector<std::string>{"suite", path, "--merge", "--out", out};
                         });
  const bool allow_failure = vm.count("allow-detector-failure") > 0;
  try {
    if (vm.count("merge")) return merge_and_report(spec, allow_failure);
    if (vm.count("episode")) {
      const std::size_t index = episode_option.value;
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
  } catch (const harness::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kExitBadInput;
  }

  std::vector<harness::Episode> mine;
  for (const harness::Episode& e : episodes)
    if (e.index % shard_count == shard) mine.push_back(e);
  std::fprintf(stderr, "gauntlet suite %s v%llu: %zu episodes", spec.name.c_str(),
               static_cast<unsigned long long>(spec.version), episodes.size());
  if (shard_count > 1) std::fprintf(stderr, ", shard %zu/%zu runs %zu", shard, shard_count, mine.size());
  std::fprintf(stderr, ", %llu workers, results in %s\n", jobs_option.value, spec.out.c_str());
  harness::WorkerPoolResult result;
  try {
    result = harness::run_episodes(spec, mine, registry, jobs_option.value,
                                   {static_cast<bool>(::isatty(STDERR_FILENO)), vm.count("no-progress") > 0});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gauntlet suite: %s\n", e.what());
    return kExitRunFailed;
  }
  if (result.bad_input > 0) {
    std::fprintf(stderr, "gauntlet suite: %zu of %zu episodes found bad input; no merged summary\n", result.bad_input,
                 mine.size());
    return kExitBadInput;
  }
  if (shard_count > 1) {
    std::printf(
        "shard %zu/%zu: %zu episodes done, %zu failed; merge all shards with: gauntlet suite %s --merge --out %s\n",
        shard, shard_count, result.done, result.failed, path.c_str(), spec.out.c_str());
    return result.failed > 0 ? kExitRunFailed : kExitOk;
  }
  try {
    const int code = merge_and_report(spec, allow_failure);
    return result.failed > 0 ? kExitRunFailed : code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gauntlet suite: cannot write the summary: %s\n", e.what());
    return kExitRunFailed;
  }
}

}  // namespace gauntlet::cli
