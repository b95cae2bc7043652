// Processes: a killed `gauntlet run` takes its simulation process with it
// (and so releases its folder's lock), and a second command writing to a
// folder another one is writing to is refused up front.
#include <signal.h>

#include <fstream>
#include <sstream>

#include "outputs_shell.hpp"

namespace hostile_outputs {
namespace {

// `command` under bash in a process group of its own; stdout and stderr to `log`.
pid_t start(const std::string& command, const fs::path& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    const std::string line = "exec " + command + " >" + log.string() + " 2>&1 </dev/null";
    ::execl("/bin/bash", "bash", "-c", line.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  return pid;
}

std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> children;
  for (pid_t child; in >> child;) children.push_back(child);
  return children;
}

bool alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  const std::size_t close = line.rfind(')');
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] != 'Z';
}

// A port flapping every 20 ms for the whole hour: the simulation process
// works for many seconds, long enough to kill its parent mid-run.
std::string busy_scenario() {
  return tiny_scenario("1h",
                       "[{type: port_flap, target: h0.nic0~leaf0, at: 1s, duration: 59m, period: 20ms, down: 10ms}]");
}

// Issue 31, case 11.
TEST(Processes, AKilledRunTakesItsSimulationWithItAndFreesTheFolder) {
  const fs::path dir = scratch("killed-run");
  write(dir / "busy.yaml", busy_scenario());
  write(dir / "tiny.yaml", tiny_scenario());
  for (const int signal : {SIGKILL, SIGTERM}) {
    const pid_t parent =
        start(binary() + " run " + (dir / "busy.yaml").string() + " --no-progress --out " + (dir / "out").string(),
              dir / "log");
    std::vector<pid_t> simulations;
    ASSERT_TRUE(poll_until([&] { return !(simulations = children_of(parent)).empty(); }, std::chrono::seconds(60)))
        << slurp(dir / "log");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ASSERT_TRUE(alive(simulations.front())) << "the simulation ended before the test could kill its parent";
    ::kill(parent, signal);
    int status = 0;
    ::waitpid(parent, &status, 0);
    EXPECT_TRUE(poll_until([&] { return !alive(simulations.front()); }, std::chrono::seconds(2)))
        << "simulation process " << simulations.front() << " outlived its parent (signal " << signal << ")";
    ::kill(-parent, SIGKILL);  // whatever is left of the group, so that the test leaves nothing behind
    ::kill(simulations.front(), SIGKILL);
    const Result next =
        shell(binary() + " run " + (dir / "tiny.yaml").string() + " --no-progress --out " + (dir / "out").string());
    EXPECT_EQ(next.exit_code, 0) << "the next run was refused: " << next.err;
  }
}

// Issue 31, case 22.
TEST(Processes, ASecondSweepIntoTheSameFolderIsRefusedUpFront) {
  const fs::path dir = scratch("two-sweeps");
  write(dir / "busy.yaml", busy_scenario());
  write(dir / "sweep.yaml", "name: busy\nscenarios: [busy.yaml]\nseeds: {first: 1, count: 4}\n");
  const std::string sweep =
      binary() + " sweep " + (dir / "sweep.yaml").string() + " --no-progress --out " + (dir / "out").string();
  const pid_t first = start(sweep, dir / "first.log");
  ASSERT_TRUE(poll_until([&] { return fs::exists(dir / "out" / "sweep.json"); }, std::chrono::seconds(60)))
      << slurp(dir / "first.log");
  const auto begun = std::chrono::steady_clock::now();
  const Result second = shell(sweep);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count();
  const bool first_still_running = alive(first);
  ::kill(-first, SIGKILL);
  int status = 0;
  ::waitpid(first, &status, 0);
  ASSERT_TRUE(first_still_running) << "the first sweep ended too soon for the test: " << slurp(dir / "first.log");
  EXPECT_EQ(second.exit_code, 2) << second.err;
  EXPECT_NE(second.err.find("another gauntlet command is writing"), std::string::npos) << second.err;
  EXPECT_LT(seconds, 10) << "refused up front, not after running cells";
}

}  // namespace
}  // namespace hostile_outputs
