#include "sim/calibration.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace gauntlet::sim {
namespace {

// The shortest text that reads back as the same double.
std::string shortest(double value) {
  char text[32];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return std::string(text, end);
}

bool whole_unit(AttributeUnit unit) {
  return unit == AttributeUnit::duration || unit == AttributeUnit::bytes || unit == AttributeUnit::count;
}

}  // namespace

std::string_view unit_symbol(AttributeUnit unit) {
  switch (unit) {
    case AttributeUnit::duration:
      return "s";
    case AttributeUnit::bytes:
      return "B";
    case AttributeUnit::count:
      return "";
    case AttributeUnit::ratio:
      return "";
    case AttributeUnit::celsius:
      return "C";
    case AttributeUnit::watts:
      return "W";
    case AttributeUnit::megahertz:
      return "MHz";
  }
  return "";
}

std::string format_attribute_value(const Attribute& attribute, double value) {
  switch (attribute.unit) {
    case AttributeUnit::duration:
      return format_duration(static_cast<Nanos>(value));
    case AttributeUnit::bytes:
      return shortest(value) + "B";
    default:
      return shortest(value);
  }
}

double reported_value(const Attribute& attribute, double value) {
  return attribute.unit == AttributeUnit::duration ? value / 1e9 : value;
}

AttributeRegistry::AttributeRegistry(std::initializer_list<std::span<const Attribute* const>> groups) {
  for (std::span<const Attribute* const> group : groups)
    attributes_.insert(attributes_.end(), group.begin(), group.end());
  std::sort(attributes_.begin(), attributes_.end(),
            [](const Attribute* a, const Attribute* b) { return a->name < b->name; });
  for (std::size_t i = 1; i < attributes_.size(); ++i)
    if (attributes_[i]->name == attributes_[i - 1]->name)
      throw std::logic_error("calibration attribute '" + std::string(attributes_[i]->name) + "' is declared twice");
}

const Attribute* AttributeRegistry::find(std::string_view name) const {
  const auto it = std::lower_bound(attributes_.begin(), attributes_.end(), name,
                                   [](const Attribute* a, std::string_view n) { return a->name < n; });
  return it != attributes_.end() && (*it)->name == name ? *it : nullptr;
}

double Calibration::value(const Attribute& attribute) const {
  const auto it = values_.find(attribute.name);
  return it == values_.end() ? attribute.default_value : it->second;
}

void Calibration::set(const Attribute& attribute, double value) {
  const std::string name(attribute.name);
  if (!(value >= attribute.min && value <= attribute.max))
    throw std::invalid_argument("calibration attribute '" + name +
                                "' out of range: " + format_attribute_value(attribute, value));
  if (whole_unit(attribute.unit) && value != std::floor(value))
    throw std::invalid_argument("calibration attribute '" + name + "' must be whole: " + shortest(value));
  values_[name] = value;
}

bool Calibration::is_set(const Attribute& attribute) const { return values_.contains(attribute.name); }

}  // namespace gauntlet::sim
