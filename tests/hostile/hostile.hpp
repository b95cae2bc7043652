#pragma once
// The hostile corpus's harness: runs the gauntlet binary as a hostile user
// would, bounded in time (a hang is a finding, not a stuck test), and keeps
// its exit code, stdout and stderr. `--gauntlet=PATH` on the test binary's
// command line runs another build's binary (to see each case fail there).
// The scratch folders and the reading of outputs are tests/gauntlet_cli.hpp's.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/gauntlet_cli.hpp"

namespace gauntlet::hostile {

namespace fs = std::filesystem;

// Exit code 124: still running at the time limit; 128+N: killed by signal N.
using Result = cli_test::Result;
using cli_test::scratch_root;
using cli_test::slurp;

// The binary under test (main.cpp sets it from --gauntlet=PATH).
std::string& gauntlet_binary();

// An empty folder of this test process's own.
inline fs::path scratch(const std::string& name) {
  const fs::path dir = scratch_root() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

inline fs::path write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// `gauntlet ARGS`, killed after `limit_s` seconds of wall time and, when
// `cpu_s` is given, `cpu_s` seconds of CPU time (SIGXCPU: exit 152), a bound
// that holds however loaded the machine is.
inline Result gauntlet(const std::string& args, int limit_s = 60, int cpu_s = 0) {
  const fs::path dir = scratch_root();
  fs::create_directories(dir);
  const fs::path out = dir / "stdout", err = dir / "stderr";
  const std::string cpu_limit = cpu_s > 0 ? "ulimit -t " + std::to_string(cpu_s) + "; " : "";
  const std::string command = cpu_limit + "timeout -k 5 " + std::to_string(limit_s) + " " + gauntlet_binary() + " " +
                              args + " >" + out.string() + " 2>" + err.string() + " </dev/null";
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

// A small cluster that runs in about a second: 4 hosts of 2 GPUs.
inline std::string small_scenario(const std::string& detectors_yaml, const std::string& duration = "2m") {
  return "name: hostile\nseed: 1\nduration: " + duration +
         "\nengine: flow\n"
         "cluster: {spines: 1, leaves: 2, hosts: 4, gpus_per_host: 2, rnics_per_host: 2, host_link_gbps: 100,"
         " fabric_link_gbps: 100, link_latency: 1us}\n"
         "job: {name: j, gpus: 8, parallelism: {tp: 2, pp: 1, dp: 4, ep: 1}, compute_per_iteration: 1s,"
         " gradient_bytes: 100MB}\n"
         "faults:\n  - {type: gpu_throttle, target: h1.gpu0, at: 30s, duration: 30s, slowdown: 0.5}\n"
         "detectors:\n" +
         detectors_yaml + "mitigation: none\n";
}

}  // namespace gauntlet::hostile
