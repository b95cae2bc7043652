#include "sim/isolated_run.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace gauntlet::sim {
namespace {

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string bytes;
};

void write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

Child spawn(const std::function<std::string()>& body) {
  int fds[2];
  // Close-on-exec, so that no program a run starts (an exec: detector, its
  // children) holds a result pipe open past the run.
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    std::string out;
    try {
      out = "O" + body();
    } catch (const std::exception& e) {
      out = std::string("E") + e.what();
    } catch (...) {
      out = "Eunknown exception";
    }
    write_all(fds[1], out);
    ::close(fds[1]);
    std::fflush(nullptr);
    ::_exit(0);
  }
  ::close(fds[1]);
  return Child{pid, fds[0], {}};
}

// Reads from whichever children have output until all have closed their pipe.
void drain(std::vector<Child*>& running) {
  std::vector<pollfd> polls;
  for (Child* c : running) polls.push_back({c->fd, POLLIN, 0});
  if (::poll(polls.data(), polls.size(), -1) < 0 && errno != EINTR)
    throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
  for (std::size_t i = 0; i < polls.size(); ++i) {
    if (!(polls[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char buffer[65536];
    ssize_t n = ::read(running[i]->fd, buffer, sizeof buffer);
    if (n > 0) {
      running[i]->bytes.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      ::close(running[i]->fd);
      running[i]->fd = -1;
    }
  }
  std::erase_if(running, [](Child* c) { return c->fd < 0; });
}

std::string finish(Child& child) {
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status))
    throw std::runtime_error("simulation process killed by signal " + std::to_string(WTERMSIG(status)));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || child.bytes.empty())
    throw std::runtime_error("simulation process failed without a result");
  if (child.bytes[0] == 'E') throw std::runtime_error(child.bytes.substr(1));
  return child.bytes.substr(1);
}

}  // namespace

std::string run_isolated(const std::function<std::string()>& body) { return run_isolated_all({body}, 1).front(); }

std::vector<std::string> run_isolated_all(const std::vector<std::function<std::string()>>& bodies, int parallel) {
  std::vector<Child> children(bodies.size());
  std::vector<Child*> running;
  std::size_t next = 0;
  while (next < bodies.size() || !running.empty()) {
    while (next < bodies.size() && static_cast<int>(running.size()) < std::max(parallel, 1)) {
      children[next] = spawn(bodies[next]);
      running.push_back(&children[next]);
      ++next;
    }
    drain(running);
  }
  std::vector<std::string> results;
  std::string first_error;
  for (Child& child : children) {
    try {
      results.push_back(finish(child));
    } catch (const std::exception& e) {
      if (first_error.empty()) first_error = e.what();
      results.emplace_back();
    }
  }
  if (!first_error.empty()) throw std::runtime_error(first_error);
  return results;
}

}  // namespace gauntlet::sim
