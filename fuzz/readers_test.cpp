#include "fuzz/readers.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace gauntlet::fuzz {
namespace {

namespace fs = std::filesystem;

const fs::path kRegressions = fs::path(GAUNTLET_SOURCE_DIR) / "fuzz" / "regressions";

std::string bytes_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Every input the fuzzers found a bug with, fed again to its reader: each
// once crashed, hung or threw what it must not.
TEST(FuzzRegressions, EachKeptInputIsReadWithinTheContract) {
  int replayed = 0;
  for (const fs::directory_entry& folder : fs::directory_iterator(kRegressions)) {
    const Reader& reader = fuzz::reader(folder.path().filename().string());
    for (const fs::directory_entry& input : fs::directory_iterator(folder.path())) {
      SCOPED_TRACE(input.path().string());
      EXPECT_NO_THROW(reader.read(bytes_of(input.path())));
      ++replayed;
    }
  }
  EXPECT_GE(replayed, 1);
}

TEST(FuzzRegressions, FoldersAreNamedForReaders) {
  std::set<std::string> names;
  for (const Reader& r : readers()) names.insert(r.name);
  for (const fs::directory_entry& folder : fs::directory_iterator(kRegressions))
    EXPECT_TRUE(names.contains(folder.path().filename().string())) << folder.path();
  EXPECT_THROW(reader("no_such_reader"), std::invalid_argument);
}

}  // namespace
}  // namespace gauntlet::fuzz
