// gauntlet run SCENARIO.yaml [--seed N] [--detectors a,b] [--mitigation P] [--out DIR]
//              [--metrics-out DIR] [--allow-detector-failure]
#include <unistd.h>

#include <boost/program_options.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include "harness/cli/commands.hpp"
#include "harness/cli/scenario_options.hpp"
#include "harness/report/fault_windows.hpp"
#include "harness/report/run_report.hpp"
#include "harness/report/score_table.hpp"
#include "harness/runner/outputs.hpp"
#include "harness/runner/results_folder.hpp"
#include "harness/scenario/input_error.hpp"

namespace gauntlet::cli {

namespace po = boost::program_options;

namespace {

// --out and --metrics-out, checked and locked before simulating: a refusal
// costs nothing, and no other run can take the folders meanwhile.
struct RunDestinations {
  std::optional<harness::ClaimedFolder> results;
  std::optional<harness::ClaimedFolder> metrics;
};

bool claim_destinations(const std::string& out_dir, const std::string& metrics_dir, RunDestinations& claimed) {
  const char* flag = "--out";
  const std::string* dir = &out_dir;
  try {
    if (!metrics_dir.empty()) harness::check_apart(out_dir, metrics_dir);
    claimed.results.emplace(harness::ClaimedFolder::claim(out_dir));
    flag = "--metrics-out";
    dir = &metrics_dir;
    if (!metrics_dir.empty()) claimed.metrics.emplace(harness::ClaimedFolder::claim(metrics_dir));
    return true;
  } catch (const std::exception& e) {  // OutputRefused, or a folder gauntlet may not read
    std::fprintf(stderr, "gauntlet run: %s %s: %s\n", flag, dir->c_str(), e.what());
    return false;
  }
}

// The iterations line, each job's score table and its fault windows.
void print_run(const harness::Scenario& scenario, const harness::RunReport& report) {
  if (report.tenants.empty()) {
    std::printf("scenario %s, seed %llu: %llu iterations fault-free, %llu with faults (%.1f s wall)\n",
                scenario.name.c_str(), static_cast<unsigned long long>(scenario.seed),
                static_cast<unsigned long long>(report.fault_free.iterations()),
                static_cast<unsigned long long>(report.faulty.iterations()), report.wall_seconds);
  } else {
    std::printf("scenario %s, seed %llu: %zu jobs (%.1f s wall)\n", scenario.name.c_str(),
                static_cast<unsigned long long>(scenario.seed), report.tenants.size(), report.wall_seconds);
  }
  std::vector<const harness::RunReport*> views;
  for (const harness::RunReport& tenant : report.tenants) views.push_back(&tenant);
  if (views.empty()) views.push_back(&report);
  for (const harness::RunReport* view : views) {
    if (!report.tenants.empty())
      std::printf("job %s: %llu iterations fault-free, %llu with faults\n", view->scenario.job.name.c_str(),
                  static_cast<unsigned long long>(view->fault_free.iterations()),
                  static_cast<unsigned long long>(view->faulty.iterations()));
    std::printf("%s", harness::score_table(*view).c_str());
    std::printf("%s", harness::fault_window_table(harness::fault_window_times(view->faults, view->faulty.timeline,
                                                                              view->fault_free.timeline,
                                                                              sim::to_seconds(scenario.duration)))
                          .c_str());
  }
}

// Simulates; on failure prints why and returns the exit code.
std::optional<int> simulate(const harness::Scenario& scenario, const harness::DetectorRegistry& registry,
                            const harness::RunOptions& options, harness::RunReport& report) {
  try {
    report = harness::run_scenario(scenario, registry, options);
  } catch (const harness::InputError& e) {  // found by a simulation that read what the loader does not
    std::fprintf(stderr, "%s\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "run failed (reproduce with --seed %llu): %s\n",
                 static_cast<unsigned long long>(scenario.seed), e.what());
    return kExitRunFailed;
  }
  if (report.fault_free.iterations() > 0) return std::nullopt;
  // Nothing to score: every figure would be vacuous (recall 1.00 of nothing).
  std::fprintf(stderr,
               "run failed (reproduce with --seed %llu): the job completed no iteration in %s of simulated time "
               "even without faults; check compute_per_iteration, the transfer sizes and the link speeds\n",
               static_cast<unsigned long long>(scenario.seed), sim::format_duration(scenario.duration).c_str());
  return kExitRunFailed;
}

bool write_destinations(const harness::RunReport& report, const RunDestinations& claimed) {
  const harness::ClaimedFolder* folder = &*claimed.results;
  try {
    harness::write_run_results(report, *claimed.results);
    folder = claimed.metrics ? &*claimed.metrics : folder;
    if (claimed.metrics) claimed.metrics->replace_with({{"metrics.om", report.faulty.openmetrics}});
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cannot write results to %s: %s\n", folder->path().c_str(), e.what());
    return false;
  }
}

}  // namespace

int run_command(const Args& args) {
  po::options_description visible("gauntlet run SCENARIO.yaml [options]");
  ScenarioOptions scenario_options;
  std::string out_dir, metrics_dir;
  visible.add_options()("help,h", "show this help");
  add_scenario_options(visible, scenario_options);
  visible.add_options()("out", po::value(&out_dir), "output folder (default results/<name>/<seed>/)")(
      "metrics-out", po::value(&metrics_dir),
      "also write the faulty run's telemetry as OpenMetrics (DIR/metrics.om), with exporters' metric names")(
      "allow-detector-failure", "exit 0 even when a detector failed (its row still says FAILED)")(
      "no-progress", "do not show progress on stderr");
  po::variables_map vm;
  if (int status = parse_command_line(args, visible, vm, scenario_options); status >= 0) return status;

  harness::Scenario scenario;
  const harness::DetectorRegistry registry = harness::builtin_detectors();
  try {
    scenario = load_with_overrides(scenario_options, registry);
  } catch (const harness::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kExitBadInput;
  }
  if (out_dir.empty())
    out_dir = (std::filesystem::path("results") / scenario.name / std::to_string(scenario.seed)).string();
  RunDestinations claimed;
  if (!claim_destinations(out_dir, metrics_dir, claimed)) return kExitBadInput;

  harness::RunOptions options;
  options.show_progress = vm.count("no-progress") == 0 && ::isatty(STDERR_FILENO);
  options.record_metrics = !metrics_dir.empty();
  std::fprintf(stderr, "gauntlet run %s --seed %llu\n", scenario_options.path.c_str(),
               static_cast<unsigned long long>(scenario.seed));
  harness::RunReport report;
  if (const std::optional<int> failed = simulate(scenario, registry, options, report)) return *failed;
  if (!write_destinations(report, claimed)) return kExitRunFailed;
  print_run(scenario, report);
  if (const auto warning = harness::placement_warning(report)) std::fprintf(stderr, "warning: %s\n", warning->c_str());
  std::printf("results: %s\n", out_dir.c_str());
  if (!metrics_dir.empty()) std::printf("metrics: %s/metrics.om\n", metrics_dir.c_str());
  const std::vector<std::string> failed = harness::failed_detectors(report);
  for (const std::string& line : failed) std::fprintf(stderr, "detector %s\n", line.c_str());
  if (!failed.empty() && !vm.count("allow-detector-failure")) {
    std::fprintf(stderr, "%zu detector(s) failed: exit 1 (--allow-detector-failure to accept)\n", failed.size());
    return kExitRunFailed;
  }
  return kExitOk;
}

}  // namespace gauntlet::cli
