#include "harness/scenario/yaml_read.hpp"

#include <filesystem>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "harness/scenario/input_error.hpp"
#include "sim/input_file.hpp"
#include "sim/units.hpp"

namespace gauntlet::harness::yaml_read {
namespace {

// A quoted scalar is text even when it looks like a number; yaml-cpp tags
// plain scalars "?" and quoted ones "!".
bool is_plain_scalar(const YAML::Node& node) { return node.IsScalar() && node.Tag() == "?"; }

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

[[noreturn]] void fail_type(const Source& source, const Field& field, std::string_view expected) {
  source.fail(field.value_mark,
              "'" + field.name + "' must be " + std::string(expected) + ", got " + describe(field.value));
}

}  // namespace

std::string Source::resolve(const std::string& path) const {
  const std::filesystem::path given(path);
  if (given.is_absolute()) return path;
  return (std::filesystem::path(file_name_).parent_path() / given).lexically_normal().string();
}

void Source::fail(const YAML::Mark& at, const std::string& message) const {
  const SourcePos pos = to_pos(at);
  // An empty file's root has no position: point at the file's start.
  if (pos.line == 0) throw InputError(file_name_, 1, 1, message);
  throw InputError(file_name_, pos.line, pos.column, message);
}

SourcePos to_pos(const YAML::Mark& mark) {
  if (mark.is_null()) return {};
  return {mark.line + 1, mark.column + 1};
}

std::string describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a sequence";
  return "'" + node.Scalar() + "'";
}

std::string key_of(const Field& field) {
  const std::size_t dot = field.name.rfind('.');
  return dot == std::string::npos ? field.name : field.name.substr(dot + 1);
}

MapView::MapView(const Source& source, const Field& field)
    : source_(&source), name_(field.name), mark_(field.value_mark) {
  if (!field.value.IsMap()) fail_type(source, field, "a map");
  for (auto it = field.value.begin(); it != field.value.end(); ++it) {
    const YAML::Node key = it->first;
    if (!key.IsScalar()) source.fail(key.Mark(), "keys in '" + name_ + "' must be plain names");
    const std::string text = key.Scalar();
    if (std::find(keys_.begin(), keys_.end(), text) != keys_.end())
      source.fail(key.Mark(), "duplicate key '" + text + "' in '" + name_ + "'");
    const YAML::Node value = it->second;
    const bool empty = !value.IsDefined() || value.IsNull();
    const std::string path = name_.empty() ? text : name_ + "." + text;
    entries_.push_back({path, value, empty ? key.Mark() : value.Mark(), key.Mark()});
    keys_.push_back(text);
  }
}

void MapView::allow_only(std::initializer_list<std::string_view> allowed, const std::string& hint) const {
  allow_only(std::vector<std::string>(allowed.begin(), allowed.end()), hint);
}

void MapView::allow_only(const std::vector<std::string>& allowed, const std::string& hint) const {
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    if (std::find(allowed.begin(), allowed.end(), keys_[i]) != allowed.end()) continue;
    std::string where = name_.empty() ? "at the top level" : "in '" + name_ + "'";
    source_->fail(entries_[i].key_mark, "unknown key '" + keys_[i] + "' " + where +
                                            (hint.empty() ? " (expected one of: " + join(allowed) + ")" : hint));
  }
}

bool MapView::has(std::string_view key) const { return std::find(keys_.begin(), keys_.end(), key) != keys_.end(); }

Field MapView::field(std::string_view key) const {
  const auto it = std::find(keys_.begin(), keys_.end(), key);
  return entries_[static_cast<std::size_t>(it - keys_.begin())];
}

Field MapView::require(std::string_view key) const {
  if (!has(key)) fail_missing(key);
  return field(key);
}

void MapView::fail_missing(std::string_view key, const std::string& why) const {
  std::string where = name_.empty() ? "the file" : "'" + name_ + "'";
  source_->fail(mark_, where + " is missing required key '" + std::string(key) + "'" + why);
}

std::string read_text(const Source& source, const Field& field) {
  if (!field.value.IsScalar() || field.value.Scalar().empty()) fail_type(source, field, "a non-empty string");
  if (field.value.Scalar().size() > kMaxTextChars)
    source.fail(field.value_mark, "'" + field.name + "' has " + std::to_string(field.value.Scalar().size()) +
                                      " characters, more than the limit of " + std::to_string(kMaxTextChars));
  // A "\xff" escape makes bytes that are no text: they would end up in
  // summary.json, which is UTF-8.
  if (sim::invalid_utf8_at(field.value.Scalar()) != std::string_view::npos)
    source.fail(field.value_mark, "'" + field.name + "' is not UTF-8 text (a \\x escape?)");
  return field.value.Scalar();
}

long long read_integer(const Source& source, const Field& field, long long min, long long max) {
  long long value = 0;
  bool ok = is_plain_scalar(field.value);
  if (ok) {
    const std::string& text = field.value.Scalar();
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    ok = ec == std::errc() && ptr == text.data() + text.size();
  }
  if (!ok) fail_type(source, field, "an integer");
  if (value < min || value > max) {
    std::string range = max == std::numeric_limits<long long>::max()
                            ? "at least " + std::to_string(min)
                            : "between " + std::to_string(min) + " and " + std::to_string(max);
    source.fail(field.value_mark, "'" + field.name + "' must be " + range + ", got " + std::to_string(value));
  }
  return value;
}

int read_count(const Source& source, const MapView& map, std::string_view key, int min) {
  return static_cast<int>(read_integer(source, map.field(key), min, std::numeric_limits<int>::max()));
}

std::uint64_t read_unsigned(const Source& source, const Field& field) {
  std::uint64_t value = 0;
  bool ok = is_plain_scalar(field.value);
  if (ok) {
    const std::string& text = field.value.Scalar();
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    ok = ec == std::errc() && ptr == text.data() + text.size();
  }
  if (!ok) fail_type(source, field, "a non-negative integer");
  return value;
}

double read_number(const Source& source, const Field& field) {
  double value = 0;
  bool ok = is_plain_scalar(field.value);
  if (ok) {
    const std::string& text = field.value.Scalar();
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    ok = ec == std::errc() && ptr == text.data() + text.size() && std::isfinite(value);
  }
  if (!ok) fail_type(source, field, "a number");
  return value;
}

bool read_bool(const Source& source, const Field& field) {
  // Only true/false: YAML 1.1 spellings such as "yes" or "on" are too easy to
  // write by accident.
  if (is_plain_scalar(field.value)) {
    if (field.value.Scalar() == "true") return true;
    if (field.value.Scalar() == "false") return false;
  }
  fail_type(source, field, "true or false");
}

sim::Nanos read_duration(const Source& source, const Field& field, bool allow_zero) {
  if (!field.value.IsScalar()) fail_type(source, field, "a duration such as 30m");
  std::string error;
  const auto value = sim::parse_duration(field.value.Scalar(), &error);
  if (!value) source.fail(field.value_mark, "'" + field.name + "': " + error);
  if (!allow_zero && *value == 0) source.fail(field.value_mark, "'" + field.name + "' must be longer than zero");
  return *value;
}

sim::Nanos read_signed_duration(const Source& source, const Field& field) {
  if (!field.value.IsScalar()) fail_type(source, field, "a duration such as -5ms");
  std::string_view text = field.value.Scalar();
  const bool negative = text.starts_with('-');
  if (negative) text.remove_prefix(1);
  std::string error;
  const auto value = sim::parse_duration(text, &error);
  if (!value) source.fail(field.value_mark, "'" + field.name + "': " + error);
  return negative ? -*value : *value;
}

std::uint64_t read_bytes(const Source& source, const Field& field) {
  if (!field.value.IsScalar()) fail_type(source, field, "a size such as 64MB");
  std::string error;
  const auto value = sim::parse_bytes(field.value.Scalar(), &error);
  if (!value) source.fail(field.value_mark, "'" + field.name + "': " + error);
  return *value;
}

std::vector<Field> read_sequence(const Source& source, const Field& field) {
  if (field.value.IsNull()) return {};
  if (!field.value.IsSequence()) fail_type(source, field, "a list");
  std::vector<Field> items;
  std::size_t index = 0;
  for (const YAML::Node& item : field.value) {
    const std::string name = field.name + "[" + std::to_string(index++) + "]";
    // An empty item ("- ") has no position of its own; use the list's.
    const YAML::Mark mark = item.IsNull() ? field.value_mark : item.Mark();
    items.push_back({name, item, mark, mark});
  }
  return items;
}

}  // namespace gauntlet::harness::yaml_read
