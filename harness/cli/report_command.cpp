// gauntlet report DIR... [--out FILE]
// One run folder: redraws its report.html and prints its score table. Many
// runs (sweep cells, shards, several folders): merges them into one table
// with 95% confidence intervals over seeds and writes report.html with
// metric-vs-parameter curves.
#include <boost/program_options.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include "harness/cli/command_line.hpp"
#include "harness/cli/commands.hpp"
#include "harness/report/aggregate.hpp"
#include "harness/report/gnuplot.hpp"
#include "harness/report/html.hpp"
#include "harness/report/json_file.hpp"
#include "harness/report/run_report.hpp"
#include "harness/report/score_table.hpp"
#include "harness/scenario/input_error.hpp"

namespace gauntlet::cli {

namespace po = boost::program_options;
namespace fs = std::filesystem;

int merged_runs_status(const harness::Aggregate& aggregate, bool allow_detector_failure) {
  if (!aggregate.missing_cells.empty()) {
    std::fprintf(stderr, "missing %zu of %d cells (no summary.json yet):\n", aggregate.missing_cells.size(),
                 aggregate.planned_cells);
    for (const std::string& cell : aggregate.missing_cells) std::fprintf(stderr, "  %s\n", cell.c_str());
  }
  for (const std::string& failure : aggregate.failed_detectors) std::fprintf(stderr, "%s\n", failure.c_str());
  if (!aggregate.failed_detectors.empty())
    std::fprintf(
        stderr, "%zu run(s) with a failed detector: their rows merge what those detectors did before failing%s\n",
        aggregate.failed_detectors.size(), allow_detector_failure ? "" : " (--allow-detector-failure to accept)");
  const bool failed = !aggregate.failed_detectors.empty() && !allow_detector_failure;
  return aggregate.missing_cells.empty() && !failed ? kExitOk : kExitRunFailed;
}

int report_command(const Args& args) {
  po::options_description visible(
      "gauntlet report DIR... [options]\nDIR: a run's results folder or a folder of many (a sweep's out, shard "
      "outputs)");
  std::string out_file;
  visible.add_options()("help,h", "show this help")(
      "out", po::value(&out_file), "where to write report.html (default: DIR/report.html of the first DIR)")(
      "allow-detector-failure", "exit 0 even when a detector failed in some run");
  po::options_description all;
  std::vector<std::string> folders;
  all.add(visible).add_options()("dir", po::value(&folders));
  po::positional_options_description positional;
  positional.add("dir", -1);
  po::variables_map vm;
  if (const int stop = parse_options(args, visible, all, &positional, vm); stop >= 0) return stop;
  if (folders.empty()) {
    std::fprintf(stderr, "gauntlet report: give at least one results folder\n");
    return kExitBadInput;
  }
  const fs::path target = out_file.empty() ? fs::path(folders.front()) / "report.html" : fs::path(out_file);
  // Checked and locked before reading: never a device, a folder, a link or
  // a file gauntlet did not write.
  std::optional<harness::ClaimedFile> out;
  try {
    out.emplace(harness::ClaimedFile::claim(target, harness::html::is_page));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gauntlet report: --out %s: %s\n", target.c_str(), e.what());
    return kExitBadInput;
  }
  try {
    std::vector<fs::path> paths(folders.begin(), folders.end());
    const harness::Aggregate aggregate = harness::aggregate_runs(paths);
    if (aggregate.runs == 0) {
      std::fprintf(stderr, "gauntlet report: no summary.json under %s\n", folders.front().c_str());
      return kExitBadInput;
    }
    for (const std::string& warning : aggregate.warnings) std::fprintf(stderr, "warning: %s\n", warning.c_str());
    const bool single_run =
        folders.size() == 1 && fs::exists(fs::path(folders.front()) / "summary.json") && aggregate.runs == 1;
    std::string html;
    if (single_run) {
      const harness::RunView run = harness::read_run_folder(folders.front());
      std::printf("scenario %s, seed %llu: %llu iterations fault-free, %llu with faults\n", run.scenario.c_str(),
                  static_cast<unsigned long long>(run.seed), static_cast<unsigned long long>(run.iterations_fault_free),
                  static_cast<unsigned long long>(run.iterations_faulty));
      std::printf("%s", harness::score_table(run.detector_order, run.scores).c_str());
      html = harness::run_report_html(run);
    } else {
      std::printf("%s", harness::aggregate_table(aggregate).c_str());
      std::string title = "gauntlet report";
      for (const std::string& f : folders) title += " " + f;
      html = harness::aggregate_report_html(aggregate, title);
    }
    out->replace_with(html);
    std::printf("report: %s\n", target.c_str());
    return merged_runs_status(aggregate, vm.count("allow-detector-failure") > 0);
  } catch (const harness::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gauntlet report: %s\n", e.what());
    return kExitRunFailed;
  }
}

}  // namespace gauntlet::cli
