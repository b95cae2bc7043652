#pragma once
// Local worker processes: one forked process per task, at most `jobs` at
// once, and the progress line a long batch of them shows on stderr (a bar
// on a terminal, one line per finished task otherwise, for cluster logs).
// Sweeps run their cells and suites their episodes through it.
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

namespace gauntlet::harness {

// A worker's exit codes, as gauntlet's own.
inline constexpr int kWorkerOk = 0;
inline constexpr int kWorkerFailed = 1;
inline constexpr int kWorkerBadInput = 2;

// Runs one step of a worker's task (load and simulate, write results) and
// maps what it throws to the worker's exit code, reported on stderr under
// `what`: bad input (the loader's, a simulation's, a refused results folder)
// is kWorkerBadInput, anything else "<failure>: ..." and kWorkerFailed.
int worker_step(const std::string& what, const char* failure, const std::function<void()>& step);

struct WorkerPoolResult {
  std::size_t done = 0;
  std::size_t failed = 0;     // tasks that did not finish, bad input included
  std::size_t bad_input = 0;  // of those, tasks whose worker found bad input (exit code 2)
};

struct ProgressOptions {
  bool progress_bar = false;  // else a line per task
  bool quiet = false;         // no progress at all
};

class ProgressDisplay {
 public:
  // unit names the tasks in the bar: "cells", "episodes".
  ProgressDisplay(const ProgressOptions& options, std::size_t total, std::string unit);
  void update(const std::string& what, bool ok, std::size_t running, const WorkerPoolResult& result);

 private:
  ProgressOptions options_;
  std::size_t total_;
  std::string unit_;
  std::chrono::steady_clock::time_point start_;
};

// Runs work(i) for i in [0, count), each in a forked child whose exit code
// is work's return value, at most `jobs` at once; finished(i, ok, running,
// result so far) runs in the parent as each ends. Throws std::runtime_error
// when fork or waitpid fail.
using WorkerTask = std::function<int(std::size_t)>;
using WorkerFinished = std::function<void(std::size_t, bool, std::size_t, const WorkerPoolResult&)>;
WorkerPoolResult run_in_workers(std::size_t count, std::size_t jobs, const WorkerTask& work,
                                const WorkerFinished& finished);

}  // namespace gauntlet::harness
