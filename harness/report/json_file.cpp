#include "harness/report/json_file.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "harness/runner/results_folder.hpp"
#include "harness/scenario/input_error.hpp"

namespace gauntlet::harness {

nlohmann::ordered_json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), 1, 1, "cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  const std::string contents = text.str();
  try {
    return nlohmann::ordered_json::parse(contents);
  } catch (const nlohmann::json::parse_error& e) {
    // byte is 1-based and points just past the offending character.
    const std::size_t at = e.byte > 0 ? std::min<std::size_t>(e.byte - 1, contents.size()) : 0;
    int line = 1, column = 1;
    for (std::size_t i = 0; i < at; ++i) {
      if (contents[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw InputError(path.string(), line, column, "not valid JSON");
  }
}

void write_file_atomically(const std::filesystem::path& path, const std::string& contents) {
  const std::filesystem::path staging =
      path.parent_path() / ("." + path.filename().string() + ".partial-" + std::to_string(::getpid()));
  try {
    write_file_durably(staging, contents);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(staging, ignored);
    throw;
  }
  std::filesystem::rename(staging, path);
  fsync_folder(std::filesystem::absolute(path).parent_path());
}

}  // namespace gauntlet::harness
