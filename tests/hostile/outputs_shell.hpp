#pragma once
// Shared by the hostile cases of the output side: a shell command line run
// from a given folder (for `--out .`), small scenario files, and a wait.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <fstream>
#include <string>
#include <thread>

#include "../gauntlet_cli.hpp"

namespace hostile_outputs {

namespace fs = std::filesystem;
using cli_test::Result;
using cli_test::scratch;
using cli_test::slurp;

inline std::string binary() { return std::string(GAUNTLET_BINARY_DIR) + "/gauntlet"; }

// Runs `command` under bash in `folder` (the source tree when empty).
inline Result shell(const std::string& command, const fs::path& folder = {}) {
  const fs::path out = scratch("shell-stdout"), err = scratch("shell-stderr"), script = scratch("shell-script");
  std::ofstream(script) << (folder.empty() ? "" : "cd '" + folder.string() + "' || exit 99\n") << command << "\n";
  const std::string line = "bash " + script.string() + " >" + out.string() + " 2>" + err.string() + " </dev/null";
  const int status = std::system(line.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

inline void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// A 4-GPU job on two hosts: a run of it takes well under a second.
inline std::string tiny_scenario(const std::string& duration = "2m", const std::string& faults = "[]") {
  return "name: tiny\nseed: 1\nduration: " + duration +
         "\nengine: flow\n"
         "cluster: {spines: 1, leaves: 1, hosts: 2, gpus_per_host: 2, rnics_per_host: 2, rail_optimized: false,\n"
         "          host_link_gbps: 400, fabric_link_gbps: 400, link_latency: 1us}\n"
         "job: {name: llm, gpus: 4, parallelism: {tp: 2, pp: 1, dp: 2, ep: 1}, compute_per_iteration: 2s,\n"
         "      gradient_bytes: 1GB, checkpoint_interval: 1m, restart_cost: 30s}\n"
         "faults: " +
         faults + "\ndetectors: [timeout]\nmitigation: none\n";
}

// A folder of the user's: a summary.json and a report.html gauntlet must keep.
inline fs::path users_folder(const std::string& name) {
  const fs::path folder = scratch(name);
  write(folder / "summary.json", "mine\n");
  write(folder / "report.html", "mine too\n");
  return folder;
}

inline bool kept(const fs::path& folder) {
  return slurp(folder / "summary.json") == "mine\n" && slurp(folder / "report.html") == "mine too\n";
}

inline bool poll_until(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

}  // namespace hostile_outputs
