#include "harness/sweep/worker_pool.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>

#include "harness/runner/results_folder.hpp"
#include "sim/input_error.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::harness {
namespace {

std::string clock_text(double seconds) {
  char buffer[32];
  const long s = static_cast<long>(seconds + 0.5);
  if (s >= 3600)
    std::snprintf(buffer, sizeof buffer, "%ldh%02ldm", s / 3600, (s / 60) % 60);
  else
    std::snprintf(buffer, sizeof buffer, "%ldm%02lds", s / 60, s % 60);
  return buffer;
}

}  // namespace

int worker_step(const std::string& what, const char* failure, const std::function<void()>& step) {
  try {
    step();
    return kWorkerOk;
  } catch (const sim::InputError& e) {
    std::fprintf(stderr, "\n%s: %s\n", what.c_str(), e.what());
  } catch (const OutputRefused& e) {
    std::fprintf(stderr, "\n%s: %s\n", what.c_str(), e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "\n%s: %s: %s\n", what.c_str(), failure, e.what());
    return kWorkerFailed;
  }
  return kWorkerBadInput;
}

ProgressDisplay::ProgressDisplay(const ProgressOptions& options, std::size_t total, std::string unit)
    : options_(options), total_(total), unit_(std::move(unit)), start_(std::chrono::steady_clock::now()) {}

void ProgressDisplay::update(const std::string& what, bool ok, std::size_t running, const WorkerPoolResult& r) {
  if (options_.quiet) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::size_t finished = r.done + r.failed;
  const double eta = finished > 0 ? elapsed / finished * (total_ - finished) : 0;
  if (!options_.progress_bar) {
    std::fprintf(stderr, "[%zu/%zu] %s %s (%s elapsed)\n", finished, total_, ok ? "done" : "FAILED", what.c_str(),
                 clock_text(elapsed).c_str());
    return;
  }
  constexpr int kWidth = 30;
  const int filled = total_ > 0 ? static_cast<int>(kWidth * finished / total_) : kWidth;
  std::string bar(filled, '#');
  bar += std::string(kWidth - filled, '.');
  std::fprintf(stderr, "\r[%s] %zu/%zu %s, %zu running, %zu failed, %s elapsed, eta %s   ", bar.c_str(), finished,
               total_, unit_.c_str(), running, r.failed, clock_text(elapsed).c_str(), clock_text(eta).c_str());
  if (finished == total_) std::fprintf(stderr, "\n");
}

WorkerPoolResult run_in_workers(std::size_t count, std::size_t jobs, const WorkerTask& work,
                                const WorkerFinished& finished) {
  WorkerPoolResult result;
  jobs = std::max<std::size_t>(jobs, 1);
  std::map<pid_t, std::size_t> running;  // worker -> task
  std::size_t next = 0;
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  while (next < count || !running.empty()) {
    while (next < count && running.size() < jobs) {
      const pid_t pid = ::fork();
      if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
      if (pid == 0) {
        sim::die_with_parent(parent);
        const int code = work(next);
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
    const std::size_t task = it->second;
    running.erase(it);
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == kWorkerOk;
    (ok ? result.done : result.failed) += 1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == kWorkerBadInput) ++result.bad_input;
    finished(task, ok, running.size(), result);
  }
  return result;
}

}  // namespace gauntlet::harness
