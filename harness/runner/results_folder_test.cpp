#include "harness/runner/results_folder.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
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

TEST_F(ResultsFolderTest, AStreamedFileIsWrittenWithTheOthersAndAWriterThatFailsKeepsTheOldResults) {
  const auto lines = [](std::ostream& out) {
    for (int i = 0; i < 100000; ++i) out << "line " << i << '\n';
  };
  ClaimedFolder::claim(root_ / "r").replace_with({{"a.txt", "x"}}, {{"big.txt", lines}});
  EXPECT_EQ(slurp(root_ / "r" / "a.txt"), "x");
  const std::string big = slurp(root_ / "r" / "big.txt");
  EXPECT_EQ(big.substr(0, 14), "line 0\nline 1\n");
  EXPECT_EQ(big.substr(big.size() - 11), "line 99999\n");
  const auto failing = [](std::ostream& out) {
    out << "half";
    throw std::runtime_error("the writer failed");
  };
  EXPECT_THROW(ClaimedFolder::claim(root_ / "r").replace_with({{"a.txt", "y"}}, {{"big.txt", failing}}),
               std::runtime_error);
  EXPECT_EQ(slurp(root_ / "r" / "a.txt"), "x");
  EXPECT_EQ(slurp(root_ / "r" / "big.txt"), big);
  std::vector<std::string> beside;
  for (const auto& entry : fs::directory_iterator(root_)) beside.push_back(entry.path().filename().string());
  EXPECT_EQ(beside, std::vector<std::string>{"r"});  // no staging folder left
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

TEST_F(ResultsFolderTest, AFailedRenameLeavesNoStagingFile) {
  // The destination is a folder of files: rename(2) fails, nothing is left.
  fs::create_directories(root_ / "busy");
  touch(root_ / "busy" / "x");
  EXPECT_THROW(write_file_atomically(root_ / "busy", "text"), std::exception);
  for (const fs::directory_entry& e : fs::directory_iterator(root_))
    EXPECT_EQ(e.path().filename().string().find(".partial-"), std::string::npos) << e.path();
  EXPECT_EQ(slurp(root_ / "busy" / "x"), "keep me\n");
}

TEST_F(ResultsFolderTest, ATreeTakesTheMarkerAndRefusesForeignFoldersAndLinks) {
  {
    const ResultsTree tree = ResultsTree::claim(root_ / "sweep");
    tree.write_file("sweep.json", "{}");
  }
  EXPECT_TRUE(fs::exists(root_ / "sweep" / kResultsMarker));
  EXPECT_EQ(slurp(root_ / "sweep" / "sweep.json"), "{}");
  { const ResultsTree again = ResultsTree::claim(root_ / "sweep"); }  // its own folder, again
  fs::create_directories(root_ / "mine");
  touch(root_ / "mine" / "summary.json");
  EXPECT_THROW(ResultsTree::claim(root_ / "mine"), OutputRefused);
  fs::create_directory_symlink(root_ / "sweep", root_ / "link");
  EXPECT_THROW(ResultsTree::claim(root_ / "link"), OutputRefused);
  EXPECT_EQ(slurp(root_ / "mine" / "summary.json"), "keep me\n");
}

TEST_F(ResultsFolderTest, ShardsShareATreeAWholeCommandHasItAlone) {
  const ResultsTree shard0 = ResultsTree::claim(root_ / "t", "shard-0-of-2");
  const ResultsTree shard1 = ResultsTree::claim(root_ / "t", "shard-1-of-2");
  EXPECT_THROW(ResultsTree::claim(root_ / "t", "shard-1-of-2"), OutputRefused);  // the same shard twice
  EXPECT_THROW(ResultsTree::claim(root_ / "t"), OutputRefused);                  // a merge while shards run
  EXPECT_THROW(ClaimedFolder::claim(root_ / "t"), OutputRefused);                // a run replacing it
}

TEST_F(ResultsFolderTest, AFileIsReplacedOnlyWhenGauntletWroteIt) {
  const auto ours = [](const std::string& head) { return head.rfind("ours", 0) == 0; };
  touch(root_ / "table.json", "ours 1");
  ClaimedFile::claim(root_ / "table.json", ours).replace_with("ours 2");
  EXPECT_EQ(slurp(root_ / "table.json"), "ours 2");
  touch(root_ / "notes.json", "mine");
  EXPECT_THROW(ClaimedFile::claim(root_ / "notes.json", ours), OutputRefused);
  ASSERT_EQ(::mkfifo((root_ / "fifo").c_str(), 0600), 0);
  EXPECT_THROW(ClaimedFile::claim(root_ / "fifo", ours), OutputRefused);
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(root_ / "fifo")));
  EXPECT_THROW(ClaimedFile::claim(root_ / "dir/", ours), OutputRefused);
  fs::create_symlink(root_ / "table.json", root_ / "link.json");
  EXPECT_THROW(ClaimedFile::claim(root_ / "link.json", ours), OutputRefused);
}

TEST_F(ResultsFolderTest, NestedDestinationsAreRefused) {
  EXPECT_THROW(check_apart(root_ / "m", root_ / "m" / "x"), OutputRefused);
  EXPECT_THROW(check_apart(root_ / "m" / "x", root_ / "m"), OutputRefused);
  EXPECT_THROW(check_apart(root_ / "m", root_ / "m/"), OutputRefused);
  EXPECT_NO_THROW(check_apart(root_ / "m", root_ / "mx"));
}

TEST_F(ResultsFolderTest, TheWorkingFolderIsRefusedEvenEmpty) {
  fs::create_directories(root_ / "cwd");
  const fs::path before = fs::current_path();
  fs::current_path(root_ / "cwd");
  EXPECT_THROW(ClaimedFolder::claim("."), OutputRefused);
  EXPECT_THROW(ResultsTree::claim("."), OutputRefused);
  EXPECT_THROW(ClaimedFolder::claim(".."), OutputRefused);
  fs::current_path(before);
  EXPECT_TRUE(fs::is_empty(root_ / "cwd"));
}

}  // namespace
}  // namespace gauntlet::harness
