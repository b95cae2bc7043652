#include "harness/scenario/fault_params_read.hpp"

#include <algorithm>

namespace gauntlet::harness::yaml_read {
namespace {

using injectors::ParamInfo;
using injectors::ParamKind;

void read_param(const Source& source, const Field& field, const ParamInfo& param, const sim::Topology* topology,
                injectors::FaultParams& params) {
  switch (param.kind) {
    case ParamKind::fraction: {
      const double number = read_number(source, field);
      if (number < 0 || number >= 1)
        source.fail(field.value_mark,
                    "'" + field.name + "' is a fraction and must be in [0, 1), got " + field.value.Scalar());
      params.set_number(param.name, number);
      break;
    }
    case ParamKind::positive_number: {
      const double number = read_number(source, field);
      if (number <= 0)
        source.fail(field.value_mark, "'" + field.name + "' must be greater than zero, got " + field.value.Scalar());
      params.set_number(param.name, number);
      break;
    }
    case ParamKind::duration:
      params.set_duration(param.name, read_duration(source, field, true));
      break;
    case ParamKind::signed_duration:
      params.set_duration(param.name, read_signed_duration(source, field));
      break;
    case ParamKind::component: {
      std::string text = read_text(source, field);
      const auto id = sim::ComponentId::parse(text);
      if (!id || (topology && !topology->contains(*id)))
        source.fail(field.value_mark, "'" + field.name + "': '" + text + "' is not a component of this cluster");
      params.set_text(param.name, std::move(text));
      break;
    }
    case ParamKind::boolean:
      params.set_flag(param.name, read_bool(source, field));
      break;
    case ParamKind::choice: {
      std::string text = read_text(source, field);
      if (std::find(param.choices.begin(), param.choices.end(), text) == param.choices.end()) {
        std::string allowed;
        for (const std::string& c : param.choices) allowed += (allowed.empty() ? "" : ", ") + c;
        source.fail(field.value_mark, "'" + field.name + "' must be one of " + allowed + ", got '" + text + "'");
      }
      params.set_text(param.name, std::move(text));
      break;
    }
  }
}

}  // namespace

injectors::FaultParams read_fault_params(const Source& source, const MapView& map, const injectors::FaultTypeInfo& type,
                                         const sim::Topology* topology) {
  injectors::FaultParams params;
  for (const ParamInfo& param : type.params) {
    if (map.has(param.name))
      read_param(source, map.field(param.name), param, topology, params);
    else if (param.required)
      map.fail_missing(param.name, " (a parameter of " + type.name + ")");
  }
  return params;
}

void check_fault_rules(const Source& source, const MapView& map, const injectors::FaultTypeInfo& type,
                       const injectors::FaultSpec& fault) {
  if (!type.check) return;
  const auto problem = type.check(fault);
  if (!problem) return;
  const YAML::Mark at = map.has(problem->param) ? map.field(problem->param).value_mark : map.mark();
  source.fail(at, "'" + map.name() + "." + problem->param + "' " + problem->message);
}

}  // namespace gauntlet::harness::yaml_read
