#include "harness/metrics/promtool.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

namespace gauntlet::harness {
namespace {

// The first descriptor the child's files take; they follow in order.
constexpr int kFirstFileFd = 3;

// A memory file holding `text`; -1 with `error` set when it cannot be made.
int memory_file(const char* name, const std::string& text, std::string* error) {
  const int fd = ::memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) {
    *error = std::string("memfd_create: ") + std::strerror(errno);
    return -1;
  }
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = std::string("cannot hold promtool's input: ") + std::strerror(errno);
      ::close(fd);
      return -1;
    }
    done += static_cast<std::size_t>(n);
  }
  return fd;
}

std::string read_all(int fd) {
  std::string out;
  char buffer[65536];
  ::lseek(fd, 0, SEEK_SET);
  // One byte past the limit is enough to tell that promtool printed too much.
  for (ssize_t n; out.size() <= kMaxPromtoolOutputBytes && (n = ::read(fd, buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

void close_all(const std::vector<int>& fds) {
  for (int fd : fds)
    if (fd >= 0) ::close(fd);
}

// In the child: the files onto descriptors 3, 4, ... in order. The memory
// files were made close-on-exec, so each is first moved above the target
// range, then duplicated into place (dup2 clears close-on-exec).
bool place_files(const std::vector<int>& fds) {
  const int above = kFirstFileFd + static_cast<int>(fds.size()) + 1;
  std::vector<int> moved;
  for (int fd : fds) {
    const int high = ::fcntl(fd, F_DUPFD_CLOEXEC, above);
    if (high < 0) return false;
    moved.push_back(high);
  }
  for (std::size_t i = 0; i < moved.size(); ++i)
    if (::dup2(moved[i], kFirstFileFd + static_cast<int>(i)) < 0) return false;
  return true;
}

}  // namespace

std::string promtool_file_path(std::size_t i) { return "/proc/self/fd/" + std::to_string(kFirstFileFd + i); }

int run_promtool(const std::vector<std::string>& args, const std::vector<std::string>& files, std::string& output,
                 std::string* error) {
  std::vector<int> fds;
  for (const std::string& text : files) {
    fds.push_back(memory_file("gauntlet-promtool-input", text, error));
    if (fds.back() < 0) {
      close_all(fds);
      return -1;
    }
  }
  const int output_fd = memory_file("gauntlet-promtool-output", "", error);
  if (output_fd < 0) {
    close_all(fds);
    return -1;
  }
  std::vector<char*> argv{const_cast<char*>("promtool")};
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0 || ::dup2(null, STDIN_FILENO) < 0 || ::dup2(output_fd, STDOUT_FILENO) < 0 ||
        ::dup2(output_fd, STDERR_FILENO) < 0 || !place_files(fds))
      ::_exit(127);
    ::execvp("promtool", argv.data());
    ::_exit(126);
  }
  close_all(fds);
  if (pid < 0) {
    *error = std::string("fork: ") + std::strerror(errno);
    ::close(output_fd);
    return -1;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  output = read_all(output_fd);
  ::close(output_fd);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 126) {
    *error = "cannot start promtool, which checks and evaluates prom: rules (Debian: apt-get install prometheus)";
    return -1;
  }
  if (!WIFEXITED(status)) {
    *error = "promtool was killed by signal " + std::to_string(WTERMSIG(status));
    return -1;
  }
  return WEXITSTATUS(status);
}

}  // namespace gauntlet::harness
