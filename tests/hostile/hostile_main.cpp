// gtest's main, plus --gauntlet=PATH: the binary under test (default: this
// build's), so that each case can be run against an older build too.
#include <gtest/gtest.h>

#include <string>

#include "tests/hostile/hostile.hpp"

namespace gauntlet::hostile {

std::string& gauntlet_binary() {
  static std::string path = std::string(GAUNTLET_BINARY_DIR) + "/gauntlet";
  return path;
}

}  // namespace gauntlet::hostile

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.starts_with("--gauntlet=")) gauntlet::hostile::gauntlet_binary() = arg.substr(11);
  }
  return RUN_ALL_TESTS();  // tests/gauntlet_cli.hpp's environment removes the scratch folders
}
