#pragma once
// Typed, position-aware reading of a YAML tree. Every failure becomes an
// InputError pointing at the offending key or value, 1-based.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "harness/scenario/scenario.hpp"
#include "sim/time.hpp"

namespace gauntlet::harness::yaml_read {

class Source {
 public:
  explicit Source(std::string file_name) : file_name_(std::move(file_name)) {}
  const std::string& file_name() const { return file_name_; }
  [[noreturn]] void fail(const YAML::Mark& at, const std::string& message) const;
  // A path the file names, relative to the file's folder unless absolute.
  std::string resolve(const std::string& path) const;

 private:
  std::string file_name_;
};

SourcePos to_pos(const YAML::Mark& mark);

// A value together with where to point when it is wrong. A key with nothing
// after the colon yields a null node whose own mark is the next token, so
// such values are reported at their key instead.
struct Field {
  std::string name;  // dotted path for messages, e.g. "job.parallelism.tp"
  YAML::Node value;
  YAML::Mark value_mark;
  YAML::Mark key_mark;
};

// A mapping whose keys are unique; lookups keep positions for messages.
class MapView {
 public:
  MapView(const Source& source, const Field& field);

  // Fails at the first key not in allowed; hint is appended to the message.
  void allow_only(std::initializer_list<std::string_view> allowed, const std::string& hint = "") const;
  void allow_only(const std::vector<std::string>& allowed, const std::string& hint = "") const;

  bool has(std::string_view key) const;
  Field field(std::string_view key) const;    // has(key) must hold
  Field require(std::string_view key) const;  // fails at the map when missing
  [[noreturn]] void fail_missing(std::string_view key, const std::string& why = "") const;

  const std::vector<Field>& entries() const { return entries_; }
  const YAML::Mark& mark() const { return mark_; }
  const std::string& name() const { return name_; }

 private:
  const Source* source_;
  std::string name_;
  YAML::Mark mark_;
  std::vector<Field> entries_;
  std::vector<std::string> keys_;
};

std::string key_of(const Field& field);        // last component of the dotted name
std::string describe(const YAML::Node& node);  // "a map", "a sequence", "'abc'", "nothing"

// Scalar readers. Each fails at the value with the expected form in the message.
// Names, targets and commands: at most this long.
inline constexpr std::size_t kMaxTextChars = 4096;
std::string read_text(const Source& source, const Field& field);
long long read_integer(const Source& source, const Field& field, long long min, long long max);
std::uint64_t read_unsigned(const Source& source, const Field& field);
// An int of at least `min` under `key` of the map (which must have it).
int read_count(const Source& source, const MapView& map, std::string_view key, int min);
double read_number(const Source& source, const Field& field);
bool read_bool(const Source& source, const Field& field);
sim::Nanos read_duration(const Source& source, const Field& field, bool allow_zero);
// Accepts a leading '-' (for offsets such as clock skew).
sim::Nanos read_signed_duration(const Source& source, const Field& field);
std::uint64_t read_bytes(const Source& source, const Field& field);
// A sequence, or nothing (a key with an empty value) as an empty sequence.
std::vector<Field> read_sequence(const Source& source, const Field& field);

}  // namespace gauntlet::harness::yaml_read
