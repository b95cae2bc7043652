#include "harness/report/json_file.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "harness/runner/results_folder.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scoring/json_text.hpp"
#include "sim/input_file.hpp"

namespace gauntlet::harness {

nlohmann::ordered_json read_json_file(const std::filesystem::path& path) {
  return parse_json_text(sim::read_input_file(path.string(), kMaxJsonFileBytes), path.string());
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
