#include "injectors/real/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace gauntlet::injectors::real {

namespace {

constexpr std::size_t kMaxOutput = 8192;

CommandResult run_builtin(const Argv& argv) {
  CommandResult result;
  const std::string& op = argv[0];
  if (op == "@write" && argv.size() == 3) {
    std::ofstream out(argv[1]);
    out << argv[2];
    out.close();
    result.exit_code = out ? 0 : 1;
    if (!out) result.output = "cannot write " + argv[1];
  } else if (op == "@mkdir" && argv.size() == 2) {
    bool ok = ::mkdir(argv[1].c_str(), 0755) == 0 || errno == EEXIST;
    result.exit_code = ok ? 0 : 1;
    if (!ok) result.output = "mkdir " + argv[1] + ": " + std::strerror(errno);
  } else if (op == "@rmdir" && argv.size() == 2) {
    bool ok = ::rmdir(argv[1].c_str()) == 0 || errno == ENOENT;
    result.exit_code = ok ? 0 : 1;
    if (!ok) result.output = "rmdir " + argv[1] + ": " + std::strerror(errno);
  } else if (op == "@cgroup-kill" && argv.size() == 2) {
    // Kill everything in the cgroup, wait until it is empty, remove it. A
    // missing cgroup is success: the revert may run twice.
    const std::string& dir = argv[1];
    if (::access(dir.c_str(), F_OK) != 0) return {0, "already gone"};
    std::ofstream(dir + "/cgroup.kill") << "1";
    for (int i = 0; i < 100; ++i) {
      std::ifstream procs(dir + "/cgroup.procs");
      std::string pid;
      bool empty = true;
      while (procs >> pid) {
        empty = false;
        ::kill(std::stoi(pid), SIGKILL);  // kernels without cgroup.kill
      }
      if (empty && (::rmdir(dir.c_str()) == 0 || errno == ENOENT)) return {0, "killed and removed " + dir};
      ::usleep(20'000);
    }
    return {1, "cgroup " + dir + " did not empty"};
  } else if (op == "@spawn" && argv.size() >= 3) {
    pid_t pid = ::fork();
    if (pid < 0) return {1, "fork failed"};
    if (pid == 0) {
      // Double fork: the tool is re-parented to init, so no zombie of ours
      // keeps its cgroup populated after it is killed.
      if (::fork() != 0) ::_exit(0);
      ::setsid();
      // Join the cgroup before exec so that every thread the tool starts is
      // confined and killed with it.
      std::ofstream procs(argv[1] + "/cgroup.procs");
      procs << ::getpid();
      procs.close();
      if (!procs) ::_exit(126);
      int devnull = ::open("/dev/null", O_RDWR);
      ::dup2(devnull, 0), ::dup2(devnull, 1), ::dup2(devnull, 2);
      std::vector<char*> args;
      for (std::size_t i = 2; i < argv.size(); ++i) args.push_back(const_cast<char*>(argv[i].c_str()));
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    result.exit_code = 0;
    result.output = "started in " + argv[1];
  } else {
    result.exit_code = 2;
    result.output = "unknown builtin " + display(argv);
  }
  return result;
}

}  // namespace

CommandResult run_command(const Argv& argv, std::chrono::milliseconds timeout) {
  if (argv.empty()) return {2, "empty command"};
  if (argv[0].starts_with("@")) return run_builtin(argv);

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {-1, "pipe failed"};
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]), ::close(fds[1]);
    return {-1, "fork failed"};
  }
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    // Own process group: a timeout kills the command and its children only.
    ::setpgid(0, 0);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    std::string msg = "cannot run " + argv[0] + ": " + std::strerror(errno) + "\n";
    (void)!::write(1, msg.data(), msg.size());
    ::_exit(127);
  }
  ::close(fds[1]);

  CommandResult result;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (result.output.size() < kMaxOutput) result.output.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (result.output.size() > kMaxOutput) result.output.resize(kMaxOutput);
  if (timed_out) {
    result.exit_code = -1;
    result.output += "\n[timed out]";
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  }
  return result;
}

std::string display(const Argv& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() && a.find_first_not_of(
                                   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   "0123456789@%+=:,./_-") == std::string::npos;
    if (plain) {
      out += a;
    } else {
      out += '\'';
      for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
  }
  return out;
}

Argv wrap(const Argv& prefix, const Argv& argv) {
  if (prefix.empty() || argv.empty() || argv[0].starts_with("@")) return argv;
  Argv out = prefix;
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

bool is_root() { return ::geteuid() == 0; }

bool tool_exists(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && ::access((dir + "/" + name).c_str(), X_OK) == 0) return true;
  return false;
}

}  // namespace gauntlet::injectors::real
