#include "sim/input_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sim/input_error.hpp"

namespace gauntlet::sim {
namespace {

namespace fs = std::filesystem;

class InputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gauntlet-input-file-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return dir_ / name;
  }
  static std::string error_of(const std::string& path, std::size_t max_bytes = kMaxInputFileBytes) {
    try {
      read_input_file(path, max_bytes);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(InputFile, ReadsARegularFile) {
  EXPECT_EQ(read_input_file(write("a.yaml", "seed: 1\n# \xc3\xa9t\xc3\xa9\n").string()),
            "seed: 1\n# \xc3\xa9t\xc3\xa9\n");
}

TEST_F(InputFile, RefusesDevicesFifosFoldersAndLinksToThem) {
  EXPECT_NE(error_of("/dev/zero").find("/dev/zero:1:1: not a regular file"), std::string::npos);
  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(error_of(fifo.string()).find("not a regular file"), std::string::npos);  // returns: no writer awaited
  fs::create_symlink("/dev/zero", dir_ / "zero-link");
  EXPECT_NE(error_of((dir_ / "zero-link").string()).find("not a regular file"), std::string::npos);
  EXPECT_NE(error_of(dir_.string()).find("is a folder"), std::string::npos);
  EXPECT_NE(error_of((dir_ / "missing").string()).find("cannot read the file"), std::string::npos);
}

TEST_F(InputFile, StreamedFilesAreCheckedToBeRegularToo) {
  EXPECT_NO_THROW(check_regular_file(write("t.csv", "a,b\n").string()));
  EXPECT_THROW(check_regular_file("/dev/zero"), InputError);
  EXPECT_THROW(check_regular_file(dir_.string()), InputError);
}

TEST_F(InputFile, RefusesAFileOneBytePastTheLimit) {
  EXPECT_NO_THROW(read_input_file(write("at", std::string(1024, 'x')).string(), 1024));
  EXPECT_NE(
      error_of(write("past", std::string(1025, 'x')).string(), 1024).find("1025 bytes, more than the limit of 1024"),
      std::string::npos);
}

TEST_F(InputFile, PointsAtTheFirstByteThatIsNotUtf8) {
  EXPECT_NE(error_of(write("latin1", "a: 1\nb: caf\xe9\n").string()).find("latin1:2:7: not UTF-8"), std::string::npos);
}

TEST(Utf8, RefusesOverlongSurrogatesAndPastTheLastCodePoint) {
  EXPECT_EQ(invalid_utf8_at("plain \xe2\x82\xac \xf0\x9f\x98\x80"), std::string_view::npos);
  EXPECT_EQ(invalid_utf8_at("\xc0\xaf"), 0u);          // overlong '/'
  EXPECT_EQ(invalid_utf8_at("ab\xed\xa0\x80"), 2u);    // a surrogate
  EXPECT_EQ(invalid_utf8_at("\xf4\x90\x80\x80"), 0u);  // past U+10FFFF
  EXPECT_EQ(invalid_utf8_at("x\xe2\x82"), 1u);         // cut short
  EXPECT_EQ(invalid_utf8_at("\x80"), 0u);              // a lone continuation byte
}

}  // namespace
}  // namespace gauntlet::sim
