#pragma once
// `gauntlet run` as a user runs it, for the command-line tests of detectors
// that come from outside (exec: programs, prom: rule files).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace gauntlet::cli_test {

namespace fs = std::filesystem;

inline std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// An empty folder of this test process's own under the temporary directory.
inline fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("gauntlet-cli-test-" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

struct RunResult {
  int exit_code = -1;
  std::string out;  // stdout: the score table
  std::string err;
  nlohmann::json summary;
  std::string alerts;
};

// Runs `gauntlet run SCENARIO EXTRA --out DIR/result`, stdout and stderr kept in DIR.
inline RunResult gauntlet_run(const fs::path& scenario, const fs::path& dir, const std::string& extra = "") {
  const std::string command = std::string(GAUNTLET_BINARY_DIR) + "/gauntlet run " + scenario.string() + " " + extra +
                              " --out " + (dir / "result").string() + " >" + (dir / "stdout").string() + " 2>" +
                              (dir / "stderr").string() + " </dev/null";
  const int status = std::system(command.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / "stdout");
  r.err = slurp(dir / "stderr");
  if (fs::exists(dir / "result" / "summary.json"))
    r.summary = nlohmann::json::parse(slurp(dir / "result" / "summary.json"));
  r.alerts = slurp(dir / "result" / "alerts.jsonl");
  return r;
}

}  // namespace gauntlet::cli_test
