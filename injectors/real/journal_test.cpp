#include "injectors/real/journal.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace gauntlet::injectors::real {
namespace {

namespace fs = std::filesystem;

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t p = 0; (p = text.find(what, p)) != std::string::npos; p += what.size()) ++n;
  return n;
}

class JournalFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gauntlet-journal-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path() const { return (dir_ / "journal.jsonl").string(); }
  void write(const std::string& text) const { std::ofstream(path(), std::ios::binary) << text; }
  std::string text() const {
    std::ifstream in(path());
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static std::string intent(const std::string& step, const std::string& revert_argv) {
    return R"({"event":"intent","step":")" + step + R"(","fault":")" + step + R"(","revert":[)" + revert_argv + "]}\n";
  }
  static std::string applied(const std::string& step) { return R"({"event":"applied","step":")" + step + "\"}\n"; }

  std::string error_of_reading() const {
    try {
      read_journal(path());
      return "";
    } catch (const JournalError& e) {
      return e.what();
    }
  }
  fs::path dir_;
};

TEST_F(JournalFile, ATornLastLineDoesNotSwallowTheNextEntry) {
  // f2's intent was cut short by a crash; the next writer appends f1's revert.
  write(intent("f1", R"(["true"])") + applied("f1") + R"({"event":"intent","step":"f2","rev)");
  {
    Journal journal(path());
    journal.append({{"event", "reverted"}, {"step", "f1"}});
  }
  const JournalState state = read_journal(path());
  EXPECT_TRUE(state.pending.empty()) << "f1's revert was read, f2's torn intent skipped";
  EXPECT_EQ(count_of(text(), "\n"), 4);
}

TEST_F(JournalFile, GarbageIsAnErrorWithItsPosition) {
  write("garbage\n");
  EXPECT_NE(error_of_reading().find(path() + ":1:1: not a journal entry"), std::string::npos) << error_of_reading();
  write(intent("f1", R"(["true"])") + "[1, 2]\n" + applied("f1"));
  EXPECT_NE(error_of_reading().find(path() + ":2:1:"), std::string::npos) << error_of_reading();
  write(R"({"event":"intent","step":"f1","revert":"rm -rf /"})"
        "\n");
  EXPECT_NE(error_of_reading().find(path() + ":1:1: malformed intent entry"), std::string::npos) << error_of_reading();
  write("{\"event\":\"applied\",\"step\":\"f1\"}xyz\n");
  EXPECT_NE(error_of_reading().find(path() + ":1:"), std::string::npos) << "trailing garbage is not a torn write";
  // nlohmann reports a number past a double's range as out_of_range, not as a
  // parse error; found by the chaos_journal fuzzer (it once escaped as such).
  write("{\"event\":\"applied\",\"time_s\":48e88888}\n");
  EXPECT_NE(error_of_reading().find(path() + ":1:29: not a journal entry: a number out of range"), std::string::npos)
      << error_of_reading();
  EXPECT_THROW(read_journal(dir_.string()), InjectionError) << "a folder is not a journal";
}

TEST_F(JournalFile, AFailingRevertIsRetriedAndStaysPendingUntilItSucceeds) {
  const std::string flag = (dir_ / "fixed").string();
  write(intent("f1", R"(["test","-e",")" + flag + R"("])") + applied("f1"));
  RecoverResult result = revert_pending(path(), "recover");
  EXPECT_EQ(result.failed, 1);
  EXPECT_EQ(result.reverted, 0);
  EXPECT_EQ(count_of(text(), "\"exit\":1"), 3) << "three attempts: " << text();
  EXPECT_NE(text().find("\"event\":\"revert_failed\""), std::string::npos);
  ASSERT_EQ(read_journal(path()).pending.size(), 1u);
  std::ofstream(flag) << "1";
  result = revert_pending(path(), "recover");
  EXPECT_EQ(result.failed, 0);
  EXPECT_EQ(result.reverted, 1);
  EXPECT_TRUE(read_journal(path()).pending.empty());
}

TEST_F(JournalFile, AStepThatNeverFinishedApplyingIsRevertedDespiteErrors) {
  // A crash during the apply: its idempotent reverts may find nothing to undo.
  write(intent("f1", R"(["false"])"));
  const RecoverResult result = revert_pending(path(), "recover");
  EXPECT_EQ(result.reverted, 1);
  EXPECT_TRUE(read_journal(path()).pending.empty());
}

}  // namespace
}  // namespace gauntlet::injectors::real
