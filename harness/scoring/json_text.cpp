#include "harness/scoring/json_text.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <vector>

#include "harness/scenario/input_error.hpp"
#include "sim/text_position.hpp"

namespace gauntlet::harness {
namespace {

using json = nlohmann::ordered_json;

// nlohmann's messages start with "[json.exception.x.N] parse error at line 1, column 5: ".
std::string plain_message(const std::string& what) {
  auto colon = what.find(": ");
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

}  // namespace

json parse_json_text(const std::string& text, const std::string& file_name, int first_line) {
  std::vector<std::set<std::string>> keys;  // per open object
  std::optional<std::string> repeated;
  auto check_keys = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) keys.emplace_back();
    if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    if (event == json::parse_event_t::key && !repeated && !keys.empty() &&
        !keys.back().insert(parsed.get<std::string>()).second)
      repeated = parsed.get<std::string>();
    return true;
  };
  json parsed;
  try {
    parsed = json::parse(text, check_keys);
  } catch (const json::parse_error& e) {
    // The parser counts bytes read up to and including the bad one.
    auto [line, column] = sim::text_position(text, e.byte == 0 ? 0 : e.byte - 1, first_line);
    throw InputError(file_name, line, column, "invalid JSON: " + plain_message(e.what()));
  } catch (const json::exception& e) {  // a number out of a double's range
    throw InputError(file_name, first_line, 1, "invalid JSON: " + plain_message(e.what()));
  }
  if (repeated) {
    // Point at the second occurrence of the key in the text.
    const std::string quoted = "\"" + *repeated + "\"";
    std::size_t at = text.find(quoted);
    if (at != std::string::npos) at = text.find(quoted, at + 1);
    auto [line, column] = sim::text_position(text, at == std::string::npos ? 0 : at, first_line);
    throw InputError(file_name, line, column, "key '" + *repeated + "' appears twice in one object");
  }
  return parsed;
}

}  // namespace gauntlet::harness
