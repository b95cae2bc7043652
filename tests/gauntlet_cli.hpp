#pragma once
// Runs the gauntlet binary from a test: scratch folders removed when the
// test binary ends, and the exit code, stdout and stderr of one command.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace cli_test {

namespace fs = std::filesystem;

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline fs::path scratch_root() {
  return fs::temp_directory_path() / ("gauntlet-cli-test-" + std::to_string(::getpid()));
}

// Removes this process's scratch folders when the tests end.
class ScratchCleanup : public ::testing::Environment {
 public:
  void TearDown() override { fs::remove_all(scratch_root()); }
};
inline const auto* const kCleanup = ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

inline fs::path scratch(const std::string& name) {
  fs::path dir = scratch_root() / name;
  fs::remove_all(dir);
  fs::create_directories(dir.parent_path());
  return dir;
}

inline Result gauntlet(const std::string& args) {
  const fs::path out = scratch("stdout"), err = scratch("stderr");
  const std::string command = std::string(GAUNTLET_BINARY_DIR) + "/gauntlet " + args + " >" + out.string() + " 2>" +
                              err.string() + " </dev/null";
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

}  // namespace cli_test
