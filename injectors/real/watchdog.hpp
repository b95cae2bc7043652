#pragma once
// The watchdog: a separate process, started before the first apply, that
// reverts every pending step of the journal when the chaos process dies
// (even by SIGKILL: the pipe it watches then reaches end-of-file) or when the
// deadline passes while the chaos process is still alive but stuck.
#include <sys/types.h>

#include <string>

namespace gauntlet::injectors::real {

class Watchdog {
 public:
  // Throws InjectionError when the process cannot be started.
  static Watchdog start(const std::string& journal_path, double deadline_unix_s);

  Watchdog(Watchdog&& other) noexcept;
  Watchdog& operator=(Watchdog&&) = delete;
  ~Watchdog();  // releases

  // The plan finished and reverted its own faults: the watchdog exits
  // without touching anything.
  void release();
  pid_t pid() const { return pid_; }

 private:
  Watchdog(pid_t pid, int fd) : pid_(pid), fd_(fd) {}
  pid_t pid_ = -1;
  int fd_ = -1;
};

}  // namespace gauntlet::injectors::real
