#include "injectors/real/watchdog.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <exception>

#include "injectors/real/journal.hpp"

namespace gauntlet::injectors::real {

namespace {

[[noreturn]] void watchdog_main(int fd, const std::string& journal_path, double deadline) {
  ::setsid();  // away from the terminal's SIGINT and the parent's process group
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  ::signal(SIGTERM, SIG_IGN);
  ::signal(SIGPIPE, SIG_IGN);
  ::close_range(3, static_cast<unsigned>(fd) - 1, 0);
  ::close_range(static_cast<unsigned>(fd) + 1, ~0U, 0);
  const char* why = "deadline";
  for (;;) {
    double left = deadline - unix_now();
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min(left * 1000.0, 60'000.0)) + 1);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) continue;
    char c = 0;
    ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n == 1 && c == 'd') ::_exit(0);
    why = "parent-died";
    break;
  }
  try {
    revert_pending(journal_path, std::string("watchdog:") + why);
  } catch (const std::exception&) {
    ::_exit(1);
  }
  ::_exit(0);
}

}  // namespace

Watchdog Watchdog::start(const std::string& journal_path, double deadline_unix_s) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw InjectionError("cannot create the watchdog pipe");
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]), ::close(fds[1]);
    throw InjectionError("cannot fork the watchdog");
  }
  if (pid == 0) {
    ::close(fds[1]);
    watchdog_main(fds[0], journal_path, deadline_unix_s);
  }
  ::close(fds[0]);
  return Watchdog(pid, fds[1]);
}

Watchdog::Watchdog(Watchdog&& other) noexcept : pid_(other.pid_), fd_(other.fd_) {
  other.pid_ = -1;
  other.fd_ = -1;
}

Watchdog::~Watchdog() { release(); }

void Watchdog::release() {
  if (fd_ < 0) return;
  (void)!::write(fd_, "d", 1);
  ::close(fd_);
  fd_ = -1;
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace gauntlet::injectors::real
