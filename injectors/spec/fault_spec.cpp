#include "injectors/spec/fault_spec.hpp"

#include <stdexcept>

namespace gauntlet::injectors {

template <typename T>
const T* FaultParams::find(std::string_view name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return nullptr;
  const T* value = std::get_if<T>(&it->second);
  if (!value) throw std::logic_error("fault parameter '" + std::string(name) + "' read as the wrong kind");
  return value;
}

double FaultParams::number(std::string_view name) const {
  const double* v = find<double>(name);
  return v ? *v : 0.0;
}

sim::Nanos FaultParams::duration(std::string_view name) const {
  const sim::Nanos* v = find<sim::Nanos>(name);
  return v ? *v : 0;
}

const std::string& FaultParams::text(std::string_view name) const {
  static const std::string kEmpty;
  const std::string* v = find<std::string>(name);
  return v ? *v : kEmpty;
}

bool FaultParams::flag(std::string_view name) const {
  const Flag* v = find<Flag>(name);
  return v && v->value;
}

std::string_view param_range_text(ParamKind kind) {
  switch (kind) {
    case ParamKind::fraction:
      return "a fraction in [0, 1)";
    case ParamKind::positive_number:
      return "a number greater than zero";
    case ParamKind::duration:
      return "a duration of zero or more";
    case ParamKind::signed_duration:
      return "a duration, possibly negative";
    case ParamKind::component:
      return "a component id of the cluster";
    case ParamKind::boolean:
      return "true or false";
    case ParamKind::choice:
      return "one of the listed values";
  }
  return "a value";
}

}  // namespace gauntlet::injectors
