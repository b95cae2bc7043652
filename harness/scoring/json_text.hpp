#pragma once
// JSON as the score readers accept it: a syntax error, a number too large
// for a double or a key repeated within one object is bad input, reported
// at its file:line:col (a repeated key would otherwise silently win).
#include <string>

#include <nlohmann/json.hpp>

namespace gauntlet::harness {

// `text` starts at line `first_line`, column 1 of `file_name`. Throws InputError.
nlohmann::ordered_json parse_json_text(const std::string& text, const std::string& file_name, int first_line = 1);

}  // namespace gauntlet::harness
