#include "harness/scenario/input_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/scenario/input_error.hpp"

namespace gauntlet::harness {

std::string read_input_file(const std::string& path, std::size_t max_bytes) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (error) throw InputError(path, 1, 1, "cannot read the file: " + error.message());
  if (!std::filesystem::is_regular_file(status)) throw InputError(path, 1, 1, "not a regular file");
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (!error && size > max_bytes)
    throw InputError(
        path, 1, 1,
        "the file has " + std::to_string(size) + " bytes, more than the limit of " + std::to_string(max_bytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 1, 1, std::string("cannot read the file: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().size() > max_bytes)  // grew while being read
    throw InputError(path, 1, 1, "the file is larger than the limit of " + std::to_string(max_bytes) + " bytes");
  return text.str();
}

}  // namespace gauntlet::harness
