#pragma once
// JSON as every reader of user files accepts it: a syntax error, nesting
// deeper than kMaxJsonDepth, a number past a double's range, text that is
// not UTF-8 or a key repeated within one object is bad input, reported at
// its file:line:col (a repeated key would otherwise silently win, and a deep
// nest would crash whatever walks the tree recursively later).
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gauntlet::sim {

// Far beyond what any file gauntlet reads needs (its summaries nest 6 deep),
// far below what a recursive copy or dump of the tree can afford.
inline constexpr int kMaxJsonDepth = 128;

// Keys of one object: the parsed tree keeps an object's keys in file order
// in a list, so each key costs a scan of those before it. Summaries have a
// few dozen; a detector per key would take ten thousand suites' worth.
inline constexpr std::size_t kMaxJsonObjectKeys = 10'000;

// Throws InputError at the bracket that opens level max_depth + 1, or at the
// key past kMaxJsonObjectKeys in one object; strings are skipped, so this
// is one linear pass over the text.
void check_json_shape(std::string_view text, const std::string& file_name, int first_line = 1,
                      int max_depth = kMaxJsonDepth);

// Where the value at `path` starts in a JSON text already parsed, for
// pointing at it: keys joined by '.', array elements as [i]
// ("load.profiles[2].points[0].offered_load"); "" is the whole document.
// The nearest enclosing value found when the path goes further than the text.
std::size_t json_path_offset(std::string_view text, std::string_view path);

// `text` starts at line `first_line`, column 1 of `file_name`. Throws InputError.
nlohmann::ordered_json parse_json_input(const std::string& text, const std::string& file_name, int first_line = 1);

}  // namespace gauntlet::sim
