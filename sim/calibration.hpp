#pragma once
// Calibration constants as named attributes. A figure a model takes from a
// datasheet, a paper or a modelling choice rather than from the scenario
// (the transport timeout, a probe's RTT floor, a hot GPU's temperature) is
// an Attribute: a dotted name, a unit, a default and where it comes from, a
// valid range and one line saying what it does. A Calibration is the set of
// values in force for one run: a scenario's `calibration:` block sets some
// by name, the rest keep their defaults, and summary.json lists them all.
//
// A Calibration is plain data handed to each model that reads it; nothing
// reads calibration from anywhere else.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.hpp"

namespace gauntlet::sim {

enum class AttributeUnit {
  duration,  // stored in nanoseconds, written with a unit ("4s", "100ms")
  bytes,     // written as a size ("64B", "100KB")
  count,     // a whole number
  ratio,     // a dimensionless fraction or factor
  celsius,   // degrees Celsius
  watts,
  megahertz,
};

struct Attribute {
  std::string_view name;  // "transport.timeout"
  AttributeUnit unit;
  double default_value;  // durations in nanoseconds
  double min;            // inclusive bounds, in the same unit as the default
  double max;
  std::string_view doc;     // what the value does, one line
  std::string_view source;  // where the default comes from; empty for a modelling choice

  constexpr Nanos default_duration() const { return static_cast<Nanos>(default_value); }
  constexpr int default_count() const { return static_cast<int>(default_value); }
};

// "s" for durations (reported in seconds), "B", "C", "W", "MHz"; empty for
// counts and ratios.
std::string_view unit_symbol(AttributeUnit unit);
// A value as a scenario would write it: "4s", "4096B", "0.97", "70".
std::string format_attribute_value(const Attribute& attribute, double value);
// The value in the unit unit_symbol names (durations in seconds).
double reported_value(const Attribute& attribute, double value);

// Every attribute one build knows, by name.
class AttributeRegistry {
 public:
  // Each group lists attributes of one layer; names must be unique overall.
  explicit AttributeRegistry(std::initializer_list<std::span<const Attribute* const>> groups);
  const Attribute* find(std::string_view name) const;
  const std::vector<const Attribute*>& all() const { return attributes_; }  // in name order

 private:
  std::vector<const Attribute*> attributes_;
};

class Calibration {
 public:
  // The scenario's value of `attribute`, or its default.
  double value(const Attribute& attribute) const;
  Nanos duration(const Attribute& attribute) const { return static_cast<Nanos>(value(attribute)); }
  int count(const Attribute& attribute) const { return static_cast<int>(value(attribute)); }
  std::uint64_t bytes(const Attribute& attribute) const { return static_cast<std::uint64_t>(value(attribute)); }

  // Throws std::invalid_argument when the value is out of the attribute's
  // range or not whole where the unit needs it (the loader checks first).
  void set(const Attribute& attribute, double value);
  bool is_set(const Attribute& attribute) const;
  bool empty() const { return values_.empty(); }

 private:
  std::map<std::string, double, std::less<>> values_;  // only the ones set, by name
};

}  // namespace gauntlet::sim
