#include "harness/runner/results_folder.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace gauntlet::harness {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void touch(const fs::path& path, const std::string& text = "keep me\n") { std::ofstream(path) << text; }

class ResultsFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("results-folder-test-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(ResultsFolderTest, AFolderOfSomeoneElsesFilesIsRefusedAndKept) {
  fs::create_directories(root_ / "v");
  touch(root_ / "v" / "notes.txt");
  EXPECT_THROW(ClaimedFolder::claim(root_ / "v"), OutputRefused);
  EXPECT_EQ(slurp(root_ / "v" / "notes.txt"), "keep me\n");
}

TEST_F(ResultsFolderTest, ARegularFileIsRefusedAndKept) {
  touch(root_ / "file");
  EXPECT_THROW(ClaimedFolder::claim(root_ / "file"), OutputRefused);
  EXPECT_EQ(slurp(root_ / "file"), "keep me\n");
}

TEST_F(ResultsFolderTest, ASymbolicLinkIsRefused) {
  fs::create_directories(root_ / "real");
  fs::create_directory_symlink(root_ / "real", root_ / "link");
  EXPECT_THROW(ClaimedFolder::claim(root_ / "link"), OutputRefused);
}

TEST_F(ResultsFolderTest, ItsOwnResultsAreReplacedWhole) {
  {
    const ClaimedFolder out = ClaimedFolder::claim(root_ / "r");
    out.replace_with({{"a.txt", "first"}, {"old-only.txt", "x"}});
  }
  EXPECT_TRUE(fs::exists(root_ / "r" / kResultsMarker));
  {
    const ClaimedFolder out = ClaimedFolder::claim(root_ / "r");
    out.replace_with({{"a.txt", "second"}});
  }
  EXPECT_EQ(slurp(root_ / "r" / "a.txt"), "second");
  EXPECT_FALSE(fs::exists(root_ / "r" / "old-only.txt"));
  // Nothing but the folder is left beside it: no staging, no old copy, no lock.
  std::vector<std::string> beside;
  for (const auto& entry : fs::directory_iterator(root_)) beside.push_back(entry.path().filename().string());
  EXPECT_EQ(beside, std::vector<std::string>{"r"});
}

TEST_F(ResultsFolderTest, AnEmptyFolderIsUsed) {
  fs::create_directories(root_ / "empty");
  ClaimedFolder::claim(root_ / "empty").replace_with({{"a.txt", "x"}});
  EXPECT_EQ(slurp(root_ / "empty" / "a.txt"), "x");
}

TEST_F(ResultsFolderTest, TrailingSlashAndDotNameTheFolderItself) {
  EXPECT_EQ(normalized_target(root_.string() + "/r/"), root_ / "r");
  EXPECT_EQ(normalized_target(root_ / "r" / "."), root_ / "r");
  ClaimedFolder::claim(root_.string() + "/r/").replace_with({{"a.txt", "x"}});
  EXPECT_EQ(slurp(root_ / "r" / "a.txt"), "x");
  // The working folder, not written by gauntlet, is refused like any other.
  touch(root_ / "notes.txt");
  const fs::path previous = fs::current_path();
  fs::current_path(root_);
  EXPECT_THROW(ClaimedFolder::claim("."), OutputRefused);
  fs::current_path(previous);
  EXPECT_THROW(ClaimedFolder::claim("/"), OutputRefused);
}

TEST_F(ResultsFolderTest, ASecondClaimWhileTheFirstIsHeldIsRefused) {
  const ClaimedFolder first = ClaimedFolder::claim(root_ / "r");
  try {
    ClaimedFolder::claim(root_ / "r");
    FAIL() << "the second claim succeeded";
  } catch (const OutputRefused& e) {
    EXPECT_NE(std::string(e.what()).find("another gauntlet run"), std::string::npos) << e.what();
  }
}

TEST_F(ResultsFolderTest, StagingLeftByAKilledRunIsRemovedOnTheNextClaim) {
  fs::create_directories(root_ / ".r.partial-999999");
  touch(root_ / ".r.partial-999999" / "summary.json", "half");
  ClaimedFolder::claim(root_ / "r").replace_with({{"a.txt", "x"}});
  EXPECT_FALSE(fs::exists(root_ / ".r.partial-999999"));
}

TEST_F(ResultsFolderTest, OldResultsStrandedBetweenTwoRenamesAreRestored) {
  // A run killed after moving the old results aside and before moving the
  // new ones in: the folder is missing and its results sit in .r.old-PID.
  fs::create_directories(root_ / ".r.old-999999");
  touch(root_ / ".r.old-999999" / kResultsMarker, "");
  touch(root_ / ".r.old-999999" / "summary.json", "old results");
  { const ClaimedFolder out = ClaimedFolder::claim(root_ / "r"); }
  EXPECT_EQ(slurp(root_ / "r" / "summary.json"), "old results");
  EXPECT_FALSE(fs::exists(root_ / ".r.old-999999"));
}

}  // namespace
}  // namespace gauntlet::harness
