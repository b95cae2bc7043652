#include "harness/scoring/json_text.hpp"

#include "sim/json_input.hpp"

namespace gauntlet::harness {

nlohmann::ordered_json parse_json_text(const std::string& text, const std::string& file_name, int first_line) {
  return sim::parse_json_input(text, file_name, first_line);
}

}  // namespace gauntlet::harness
