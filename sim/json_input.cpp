#include "sim/json_input.hpp"

#include <optional>
#include <set>
#include <vector>

#include "sim/input_error.hpp"
#include "sim/input_file.hpp"
#include "sim/text_position.hpp"

namespace gauntlet::sim {
namespace {

using json = nlohmann::ordered_json;

// nlohmann's messages start with "[json.exception.x.N] ", parse errors go on
// with "parse error at line 1, column 5: ".
std::string plain_message(const std::string& what) {
  std::string message = what;
  if (const auto bracket = message.find("] "); message.starts_with("[") && bracket != std::string::npos)
    message = message.substr(bracket + 2);
  if (const auto colon = message.find(": "); message.starts_with("parse error") && colon != std::string::npos)
    message = message.substr(colon + 2);
  return message;
}

[[noreturn]] void fail_at(std::string_view text, std::size_t offset, const std::string& file_name, int first_line,
                          const std::string& message) {
  const auto [line, column] = text_position(text, offset, first_line);
  throw InputError(file_name, line, column, message);
}

// The first key repeated within one object, found in a pass of its own: the
// parser's filtering callback, which could see keys as the tree is built,
// rescans an array's elements at the end of each object inside it, so an
// array of 200,000 objects took minutes.
class RepeatedKeys final : public nlohmann::json_sax<json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    keys_.emplace_back();
    return true;
  }
  bool key(string_t& key) override {
    if (!keys_.empty() && !keys_.back().insert(key).second) {
      repeated = key;
      return false;  // stop here: one is enough
    }
    return true;
  }
  bool end_object() override {
    if (!keys_.empty()) keys_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

  std::optional<std::string> repeated;

 private:
  std::vector<std::set<std::string>> keys_;  // per open object
};

std::size_t skip_space(std::string_view text, std::size_t at) {
  while (at < text.size() && (text[at] == ' ' || text[at] == '\n' || text[at] == '\r' || text[at] == '\t')) ++at;
  return at;
}

// The offset just past the string starting at text[at] (a '"').
std::size_t skip_string(std::string_view text, std::size_t at) {
  for (++at; at < text.size(); ++at) {
    if (text[at] == '\\')
      ++at;
    else if (text[at] == '"')
      return at + 1;
  }
  return text.size();
}

// The offset just past the value starting at text[at].
std::size_t skip_value(std::string_view text, std::size_t at) {
  int depth = 0;
  while (at < text.size()) {
    const char c = text[at];
    if (c == '"') {
      at = skip_string(text, at);
      if (depth == 0) return at;
      continue;
    }
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') {
      if (--depth <= 0) return at + 1;
    }
    if (depth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t')) return at;
    ++at;
  }
  return at;
}

// In the object at text[at], the offset of key's value; npos when absent.
std::size_t member_offset(std::string_view text, std::size_t at, std::string_view key) {
  if (at >= text.size() || text[at] != '{') return std::string_view::npos;
  at = skip_space(text, at + 1);
  while (at < text.size() && text[at] == '"') {
    const std::size_t end = skip_string(text, at);
    const bool match = text.substr(at + 1, end - at - 2) == key;
    at = skip_space(text, end);
    if (at >= text.size() || text[at] != ':') return std::string_view::npos;
    at = skip_space(text, at + 1);
    if (match) return at;
    at = skip_space(text, skip_value(text, at));
    if (at >= text.size() || text[at] != ',') return std::string_view::npos;
    at = skip_space(text, at + 1);
  }
  return std::string_view::npos;
}

// In the array at text[at], the offset of element `index`; npos when absent.
std::size_t element_offset(std::string_view text, std::size_t at, std::size_t index) {
  if (at >= text.size() || text[at] != '[') return std::string_view::npos;
  at = skip_space(text, at + 1);
  for (std::size_t i = 0; i < index; ++i) {
    at = skip_space(text, skip_value(text, at));
    if (at >= text.size() || text[at] != ',') return std::string_view::npos;
    at = skip_space(text, at + 1);
  }
  return at < text.size() && text[at] != ']' ? at : std::string_view::npos;
}

}  // namespace

std::size_t json_path_offset(std::string_view text, std::string_view path) {
  std::size_t at = skip_space(text, 0);
  while (!path.empty()) {
    std::size_t next = std::string_view::npos;
    if (path.front() == '[') {
      const std::size_t close = path.find(']');
      if (close == std::string_view::npos) return at;
      std::size_t index = 0;
      for (char c : path.substr(1, close - 1)) index = index * 10 + static_cast<std::size_t>(c - '0');
      next = element_offset(text, at, index);
      path.remove_prefix(close + 1);
    } else {
      if (path.front() == '.') path.remove_prefix(1);
      const std::size_t end = path.find_first_of(".[");
      next = member_offset(text, at, path.substr(0, end));
      path.remove_prefix(end == std::string_view::npos ? path.size() : end);
    }
    if (next == std::string_view::npos) return at;
    at = next;
  }
  return at;
}

void check_json_shape(std::string_view text, const std::string& file_name, int first_line, int max_depth) {
  // Per open container: whether it is an object, and its commas so far.
  std::vector<std::pair<bool, std::size_t>> open;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (static_cast<int>(open.size()) == max_depth)
        fail_at(text, i, file_name, first_line,
                "JSON nested deeper than " + std::to_string(max_depth) + " levels, the limit");
      open.emplace_back(c == '{', 0);
    } else if ((c == ']' || c == '}') && !open.empty()) {
      open.pop_back();
    } else if (c == ',' && !open.empty() && open.back().first && ++open.back().second == kMaxJsonObjectKeys) {
      fail_at(text, i + 1, file_name, first_line,
              "an object with more than " + std::to_string(kMaxJsonObjectKeys) + " keys, the limit");
    }
  }
}

json parse_json_input(const std::string& text, const std::string& file_name, int first_line) {
  check_utf8(text, file_name, first_line);
  check_json_shape(text, file_name, first_line);
  json parsed;
  try {
    parsed = json::parse(text);
  } catch (const json::parse_error& e) {
    // The parser counts bytes read up to and including the bad one.
    fail_at(text, e.byte == 0 ? 0 : e.byte - 1, file_name, first_line, "invalid JSON: " + plain_message(e.what()));
  } catch (const json::exception& e) {  // a number out of a double's range: "number overflow parsing '1e400'"
    const std::string what = e.what();
    const std::size_t open = what.find('\''), close = what.rfind('\'');
    const std::size_t at = open < close ? text.find(what.substr(open + 1, close - open - 1)) : std::string::npos;
    fail_at(text, at == std::string::npos ? 0 : at, file_name, first_line, "invalid JSON: " + plain_message(what));
  }
  RepeatedKeys keys;
  json::sax_parse(text, &keys);
  if (const std::optional<std::string>& repeated = keys.repeated) {
    // Point at the second occurrence of the key in the text.
    const std::string quoted = "\"" + *repeated + "\"";
    std::size_t at = text.find(quoted);
    if (at != std::string::npos) at = text.find(quoted, at + 1);
    fail_at(text, at == std::string::npos ? 0 : at, file_name, first_line,
            "key '" + *repeated + "' appears twice in one object");
  }
  return parsed;
}

}  // namespace gauntlet::sim
