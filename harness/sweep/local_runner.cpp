#include "harness/sweep/local_runner.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>

#include "harness/report/trace.hpp"
#include "harness/runner/outputs.hpp"
#include "harness/scenario/input_error.hpp"

namespace gauntlet::harness {
namespace {

using Clock = std::chrono::steady_clock;

// A cell worker's exit codes, as gauntlet's own.
constexpr int kCellOk = 0;
constexpr int kCellFailed = 1;
constexpr int kCellBadInput = 2;

std::string clock_text(double seconds) {
  char buffer[32];
  const long s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) std::snprintf(buffer, sizeof buffer, "%ldh%02ldm", s / 3600, (s / 60) % 60);
  else std::snprintf(buffer, sizeof buffer, "%ldm%02lds", s / 60, s % 60);
  return buffer;
}

std::string describe(const SweepSpec& spec, const SweepCell& cell) {
  std::string text = spec.scenarios[cell.scenario].name;
  for (const auto& [path, value] : cell_params(spec, cell)) text += " " + path + "=" + value;
  return text + " seed " + std::to_string(cell.seed);
}

class ProgressDisplay {
 public:
  ProgressDisplay(const SweepRunOptions& options, std::size_t total)
      : options_(options), total_(total), start_(Clock::now()) {}

  void update(const SweepSpec& spec, const SweepCell& cell, bool ok, std::size_t running, const SweepRunResult& r) {
    if (options_.quiet) return;
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const std::size_t finished = r.done + r.failed;
    const double eta = finished > 0 ? elapsed / finished * (total_ - finished) : 0;
    if (!options_.progress_bar) {
      std::fprintf(stderr, "[%zu/%zu] %s %s (%s elapsed)\n", finished, total_, ok ? "done" : "FAILED",
                   describe(spec, cell).c_str(), clock_text(elapsed).c_str());
      return;
    }
    constexpr int kWidth = 30;
    const int filled = total_ > 0 ? static_cast<int>(kWidth * finished / total_) : kWidth;
    std::string bar(filled, '#');
    bar += std::string(kWidth - filled, '.');
    std::fprintf(stderr, "\r[%s] %zu/%zu cells, %zu running, %zu failed, %s elapsed, eta %s   ", bar.c_str(),
                 finished, total_, running, r.failed, clock_text(elapsed).c_str(), clock_text(eta).c_str());
    if (finished == total_) std::fprintf(stderr, "\n");
  }

 private:
  SweepRunOptions options_;
  std::size_t total_;
  Clock::time_point start_;
};

}  // namespace

int run_one_cell(const SweepSpec& spec, const SweepCell& cell, const DetectorRegistry& registry, int parallel_runs) {
  const std::string what = describe(spec, cell);
  RunReport report;
  try {
    const Scenario scenario = cell_scenario(spec, cell, registry);
    RunOptions options;
    options.parallel_runs = parallel_runs;
    report = run_scenario(scenario, registry, options);
  } catch (const InputError& e) {  // the loader's, or a simulation's that read a parameter only it uses
    std::fprintf(stderr, "\n%s: %s\n", what.c_str(), e.what());
    return kCellBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "\n%s: run failed: %s\n", what.c_str(), e.what());
    return kCellFailed;
  }
  try {
    // report.html per cell is left out (gnuplot for thousands of cells);
    // `gauntlet report CELL_FOLDER` draws it on demand.
    write_run_outputs(report, ClaimedFolder::claim(cell_folder(spec, cell)),
                      {{"trace.json", trace_json(report)}, {"cell.json", cell_json(cell_info(spec, cell))}});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "\n%s: cannot write results: %s\n", what.c_str(), e.what());
    return kCellFailed;
  }
  return kCellOk;
}

SweepRunResult run_cells(const SweepSpec& spec, const std::vector<SweepCell>& cells, const DetectorRegistry& registry,
                         const SweepRunOptions& options) {
  SweepRunResult result;
  ProgressDisplay progress(options, cells.size());
  const std::size_t jobs = std::max<std::size_t>(options.jobs, 1);
  // With several workers each runs its two simulations one after the other,
  // so --jobs N keeps about N cores busy.
  const int parallel_runs = jobs > 1 ? 1 : 2;
  std::map<pid_t, std::size_t> running;  // worker -> position in cells
  std::size_t next = 0;
  std::fflush(nullptr);
  while (next < cells.size() || !running.empty()) {
    while (next < cells.size() && running.size() < jobs) {
      const pid_t pid = ::fork();
      if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
      if (pid == 0) {
        const int code = run_one_cell(spec, cells[next], registry, parallel_runs);
        std::fflush(nullptr);
        ::_exit(code);
      }
      running[pid] = next++;
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;  // not one of ours
    const SweepCell& cell = cells[it->second];
    running.erase(it);
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    (ok ? result.done : result.failed) += 1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == kCellBadInput) ++result.bad_input;
    progress.update(spec, cell, ok, running.size(), result);
  }
  return result;
}

}  // namespace gauntlet::harness
