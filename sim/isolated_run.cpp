#include "sim/isolated_run.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string_view>

#include "sim/contract.hpp"
#include "sim/input_error.hpp"

namespace gauntlet::sim {
namespace {

// A child answers 'O' and its result, or 'E', the kind of error and its
// fields, each as "<length>:<bytes>" so that any text survives.
constexpr char kResult = 'O';
constexpr char kError = 'E';
constexpr char kInput = 'I';
constexpr char kContract = 'C';
constexpr char kFailure = 'F';

void put_field(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
}

std::string encode_current_exception() {
  std::string out(1, kError);
  try {
    throw;
  } catch (const InputError& e) {
    out += kInput;
    for (const std::string& field : {e.file(), std::to_string(e.line()), std::to_string(e.column()), e.message()})
      put_field(out, field);
  } catch (const ContractViolation& e) {
    out += kContract;
    for (const std::string& field : {e.file(), std::to_string(e.line()), e.expression(), e.detail()})
      put_field(out, field);
  } catch (const std::exception& e) {
    out += kFailure;
    put_field(out, e.what());
  } catch (...) {
    out += kFailure;
    put_field(out, "unknown exception");
  }
  return out;
}

class FieldReader {
 public:
  explicit FieldReader(std::string_view text) : rest_(text) {}
  std::string text() {
    const std::size_t colon = rest_.find(':');
    std::size_t size = 0;
    if (colon == std::string_view::npos ||
        std::from_chars(rest_.data(), rest_.data() + colon, size).ptr != rest_.data() + colon ||
        size > rest_.size() - colon - 1)
      throw std::runtime_error("simulation process sent a malformed error report");
    std::string field(rest_.substr(colon + 1, size));
    rest_.remove_prefix(colon + 1 + size);
    return field;
  }
  int number() {
    const std::string field = text();
    int value = 0;
    if (std::from_chars(field.data(), field.data() + field.size(), value).ptr != field.data() + field.size())
      throw std::runtime_error("simulation process sent a malformed error report");
    return value;
  }

 private:
  std::string_view rest_;
};

[[noreturn]] void rethrow_child_error(std::string_view report) {
  if (report.empty()) throw std::runtime_error("simulation process sent an empty error report");
  FieldReader fields(report.substr(1));
  switch (report[0]) {
    case kInput: {
      std::string file = fields.text();
      const int line = fields.number();
      const int column = fields.number();
      throw InputError(std::move(file), line, column, fields.text());
    }
    case kContract: {
      std::string file = fields.text();
      const int line = fields.number();
      std::string expression = fields.text();
      throw ContractViolation(std::move(file), line, std::move(expression), fields.text());
    }
    case kFailure:
      throw std::runtime_error(fields.text());
    default:
      throw std::runtime_error("simulation process sent an error report of unknown kind");
  }
}

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
  const pid_t parent = ::getpid();
  int fds[2];
  // Close-on-exec, so that no program a run starts (an exec: detector, its
  // children) holds a result pipe open past the run.
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    die_with_parent(parent);
    ::close(fds[0]);
    std::string out;
    try {
      out = kResult + body();
    } catch (...) {
      out = encode_current_exception();
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
  if (child.bytes[0] == kError) rethrow_child_error(std::string_view(child.bytes).substr(1));
  return child.bytes.substr(1);
}

}  // namespace

void die_with_parent(pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);  // it died between fork() and prctl()
}

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
  std::exception_ptr first_error;
  for (Child& child : children) {
    try {
      results.push_back(finish(child));
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
      results.emplace_back();
    }
  }
  if (first_error) std::rethrow_exception(first_error);
  return results;
}

}  // namespace gauntlet::sim
