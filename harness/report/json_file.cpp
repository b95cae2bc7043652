#include "harness/report/json_file.hpp"

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

}  // namespace gauntlet::harness
