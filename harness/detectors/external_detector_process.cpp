#include "harness/detectors/external_detector_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "harness/detectors/detector_reply.hpp"

extern char** environ;

namespace gauntlet::harness {
namespace {

// A wait longer than poll() takes is cut to a minute; the caller polls again.
int poll_ms(sim::Nanos deadline_ns) {
  const sim::Nanos left = deadline_ns - wall_clock_now();
  return left <= 0 ? 0 : static_cast<int>(std::min<sim::Nanos>((left + 999'999) / 1'000'000, 60'000));
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

void close_fd(int& fd) {
  if (fd >= 0) ::close(std::exchange(fd, -1));
}

// The parent of every process, from /proc/PID/stat ("PID (COMM) STATE PPID ...";
// COMM may hold spaces and parentheses, so the last ')' ends it).
std::map<pid_t, std::vector<pid_t>> children_by_parent() {
  std::map<pid_t, std::vector<pid_t>> children;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const std::size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    std::string state;
    long parent = 0;
    if (rest >> state >> parent) children[static_cast<pid_t>(parent)].push_back(static_cast<pid_t>(std::stol(name)));
  }
  return children;
}

// Every process below `root`, wherever its process group or session is.
std::vector<pid_t> descendants(pid_t root) {
  const std::map<pid_t, std::vector<pid_t>> children = children_by_parent();
  std::vector<pid_t> found;
  std::vector<pid_t> frontier = {root};
  while (!frontier.empty()) {
    const pid_t parent = frontier.back();
    frontier.pop_back();
    const auto it = children.find(parent);
    if (it == children.end()) continue;
    for (pid_t child : it->second) {
      found.push_back(child);
      frontier.push_back(child);
    }
  }
  return found;
}

// Stops every process below `root` (stopped first, so none forks while the
// tree is read again) and returns them, to be killed with their groups.
std::vector<pid_t> freeze_descendants(pid_t root) {
  std::set<pid_t> frozen;
  for (int round = 0; round < 8; ++round) {
    bool grew = false;
    for (pid_t p : descendants(root))
      if (frozen.insert(p).second) {
        ::kill(p, SIGSTOP);
        grew = true;
      }
    if (!grew) break;
  }
  return {frozen.begin(), frozen.end()};
}

void kill_with_groups(const std::vector<pid_t>& processes) {
  const pid_t own_group = ::getpgrp();
  for (pid_t p : processes) {
    const pid_t group = ::getpgid(p);
    if (group > 0 && group != own_group) ::kill(-group, SIGKILL);
    ::kill(p, SIGKILL);
  }
}

}  // namespace

sim::Nanos wall_clock_now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

DetectorProcess::DetectorProcess(std::vector<std::string> argv_words, sim::Nanos reply_timeout)
    : timeout_text_(sim::format_duration(reply_timeout)) {
  // A detector that dies makes our next write fail with EPIPE; the default
  // SIGPIPE would kill the whole run instead.
  ::signal(SIGPIPE, SIG_IGN);
  // Every pipe end is close-on-exec: the child gets only its dup2'd copies,
  // and no other detector or simulation process inherits these.
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    start_error_ = std::string("pipe: ") + std::strerror(errno);
    return;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  std::vector<char*> argv;
  for (std::string& w : argv_words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const int rc = ::posix_spawnp(&pid_, argv[0], &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  to_child_ = in_pipe[1];
  from_child_ = out_pipe[0];
  child_stderr_ = err_pipe[0];
  if (rc != 0) {
    pid_ = -1;
    start_error_ = "cannot start '" + argv_words[0] + "': " + std::strerror(rc);
    return;
  }
  set_nonblocking(to_child_);
  set_nonblocking(from_child_);
  set_nonblocking(child_stderr_);
}

DetectorProcess::~DetectorProcess() { stop(false); }

void DetectorProcess::close_input() { close_fd(to_child_); }

void DetectorProcess::stop(bool patient) {
  // What it started, found while it still lives: a helper that called
  // setsid() has left its process group and would outlive a kill of that
  // group, and once the detector exits it is no longer below it.
  std::vector<pid_t> started;
  if (pid_ > 0 && !wait_status_) {
    ::kill(-pid_, SIGSTOP);
    started = freeze_descendants(pid_);
    ::kill(-pid_, SIGCONT);
    for (pid_t p : started) ::kill(p, SIGCONT);
  }
  close_fd(to_child_);  // EOF: a well-behaved detector exits
  if (pid_ > 0 && !wait_status_) {
    int status = 0;
    const sim::Nanos deadline = wall_clock_now() + (patient ? sim::kSecond : 0);
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (wall_clock_now() >= deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      drain_stderr();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    wait_status_ = status;
  }
  // Whatever it left running (a helper, a shell's background job) goes too.
  if (pid_ > 0) ::kill(-pid_, SIGKILL);
  kill_with_groups(started);
  drain_stderr();
  close_fd(from_child_);
  close_fd(child_stderr_);
}

void DetectorProcess::keep_stderr(const char* bytes, std::size_t count) {
  if (stderr_passed_ < kStderrPassedThrough) {
    const std::size_t now = std::min(count, kStderrPassedThrough - stderr_passed_);
    std::fwrite(bytes, 1, now, stderr);
    stderr_passed_ += now;
    if (stderr_passed_ == kStderrPassedThrough)
      std::fprintf(stderr, "\n[detector stderr past %zu bytes is dropped; its tail is kept]\n", kStderrPassedThrough);
  }
  stderr_tail_.append(bytes, count);
  if (stderr_tail_.size() > kStderrTailKept) stderr_tail_.erase(0, stderr_tail_.size() - kStderrTailKept);
}

void DetectorProcess::drain_stderr() {
  char chunk[16384];
  for (int reads = 0; child_stderr_ >= 0 && reads < 64; ++reads) {
    const ssize_t n = ::read(child_stderr_, chunk, sizeof chunk);
    if (n > 0) {
      keep_stderr(chunk, static_cast<std::size_t>(n));
    } else if (n == 0) {
      close_fd(child_stderr_);
    } else if (errno != EINTR) {
      return;  // EAGAIN: nothing more for now
    }
  }
}

std::string DetectorProcess::exit_description() {
  // The child closed its end; give it a moment to be reaped.
  if (pid_ > 0 && !wait_status_) {
    int status = 0;
    const sim::Nanos deadline = wall_clock_now() + sim::kSecond;
    pid_t got = 0;
    while ((got = ::waitpid(pid_, &status, WNOHANG)) == 0 && wall_clock_now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (got == pid_) wait_status_ = status;
  }
  if (!wait_status_) return "closed its stdout";
  const int status = *wait_status_;
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + ::strsignal(WTERMSIG(status)) + ")";
  return "ended";
}

bool DetectorProcess::write_frame(const std::string& message, sim::Nanos deadline_ns, std::string* why) {
  const std::string bytes = length_prefixed(message);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(to_child_, bytes.data() + done, bytes.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      pollfd p[2] = {{to_child_, POLLOUT, 0}, {child_stderr_, POLLIN, 0}};
      if (::poll(p, child_stderr_ >= 0 ? 2 : 1, poll_ms(deadline_ns)) == 0 && wall_clock_now() >= deadline_ns) {
        *why = "did not read its input within " + timeout_text_;
        return false;
      }
      drain_stderr();
      continue;
    }
    *why = "stopped reading its stdin: " + exit_description();
    return false;
  }
  return true;
}

bool DetectorProcess::read_more(sim::Nanos deadline_ns, std::string* why) {
  char chunk[65536];
  for (;;) {
    pollfd p[2] = {{from_child_, POLLIN, 0}, {child_stderr_, POLLIN, 0}};
    const int ready = ::poll(p, child_stderr_ >= 0 ? 2 : 1, poll_ms(deadline_ns));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0 && wall_clock_now() < deadline_ns) continue;  // poll_ms cut the wait short
    if (ready == 0) {
      *why = "no reply within " + timeout_text_;
      return false;
    }
    if (p[1].revents) drain_stderr();
    if (!p[0].revents) continue;
    const ssize_t n = ::read(from_child_, chunk, sizeof chunk);
    if (n > 0) {
      buffered_.append(chunk, static_cast<std::size_t>(n));
      return true;
    }
    if (n == 0) {
      *why = frame_start_.empty() && buffered_.empty() ? exit_description() : "reply cut short; " + exit_description();
      return false;
    }
    if (errno != EAGAIN && errno != EINTR) {
      *why = std::string("reading its stdout: ") + std::strerror(errno);
      return false;
    }
  }
}

bool DetectorProcess::has_unread_output() {
  if (!buffered_.empty()) return true;
  if (from_child_ < 0) return false;
  pollfd p = {from_child_, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0 || !(p.revents & POLLIN)) return false;
  char byte = 0;
  const ssize_t n = ::read(from_child_, &byte, 1);
  if (n <= 0) return false;
  buffered_.push_back(byte);
  return true;
}

std::string DetectorProcess::describe_stray_bytes() const {
  return describe_stray_text(frame_start_ + buffered_.substr(0, 60));
}

std::optional<std::string> DetectorProcess::read_frame(sim::Nanos deadline_ns, std::size_t max_bytes,
                                                       std::string* why) {
  frame_start_.clear();
  auto failed = [&](std::string reason) -> std::optional<std::string> {
    const std::string stray = describe_stray_bytes();
    *why = stray.empty() ? std::move(reason) : stray;
    return std::nullopt;
  };
  std::uint64_t length = 0;
  std::size_t prefix = 0;
  for (;;) {
    const LengthPrefix read = read_length_prefix(buffered_, &length, &prefix);
    if (read == LengthPrefix::complete) break;
    if (read == LengthPrefix::malformed) return failed("malformed reply: the length prefix is not a varint under 2^32");
    if (!read_more(deadline_ns, why)) return failed(*why);
  }
  frame_start_ = buffered_.substr(0, prefix);
  buffered_.erase(0, prefix);
  if (length > max_bytes)
    return failed("malformed reply: length prefix says " + std::to_string(length) + " bytes (limit " +
                  std::to_string(max_bytes) + ")");
  while (buffered_.size() < length)
    if (!read_more(deadline_ns, why)) return failed(*why);
  std::string payload = buffered_.substr(0, static_cast<std::size_t>(length));
  buffered_.erase(0, static_cast<std::size_t>(length));
  frame_start_ += payload.substr(0, 64);
  return payload;
}

}  // namespace gauntlet::harness
