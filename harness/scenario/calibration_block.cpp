#include "harness/scenario/calibration_block.hpp"

#include <set>
#include <string>

#include "harness/metrics/pipeline_calibration.hpp"
#include "harness/scenario/ground_truth_calibration.hpp"
#include "harness/mitigation/ladder_calibration.hpp"
#include "models/calibration.hpp"
#include "models/fleet/fleet_calibration.hpp"
#include "models/telemetry/counter_calibration.hpp"
#include "models/telemetry/flow_calibration.hpp"
#include "models/telemetry/gpu_failure_calibration.hpp"
#include "models/dcqcn_calibration.hpp"
#include "models/packet_transport_calibration.hpp"
#include "models/pfc_watchdog_calibration.hpp"

namespace gauntlet::harness {
namespace {

using namespace yaml_read;
using sim::Attribute;
using sim::AttributeUnit;

std::string_view group_of(std::string_view name) { return name.substr(0, name.find('.')); }

// The names to suggest for an unknown one: those of its group, else the groups.
std::string known_names(const sim::AttributeRegistry& registry, std::string_view unknown) {
  std::string same_group;
  std::set<std::string_view> groups;
  for (const Attribute* a : registry.all()) {
    groups.insert(group_of(a->name));
    if (group_of(a->name) == group_of(unknown)) same_group += (same_group.empty() ? "" : ", ") + std::string(a->name);
  }
  if (!same_group.empty()) return same_group;
  std::string out;
  for (std::string_view g : groups) out += (out.empty() ? "" : ", ") + std::string(g) + ".*";
  return out + "; 'gauntlet calibration' lists every attribute";
}

std::string_view expected_form(AttributeUnit unit) {
  switch (unit) {
    case AttributeUnit::duration:
      return "a duration such as 4s";
    case AttributeUnit::bytes:
      return "a size such as 4096B";
    case AttributeUnit::count:
      return "a whole number";
    case AttributeUnit::ratio:
      return "a number";
    case AttributeUnit::celsius:
      return "a number of degrees Celsius";
    case AttributeUnit::watts:
      return "a number of watts";
    case AttributeUnit::megahertz:
      return "a number of MHz";
  }
  return "a number";
}

double read_value(const Source& source, const Field& field, const Attribute& attribute) {
  if (!field.value.IsScalar())
    source.fail(field.value_mark, "'" + field.name + "' must be " + std::string(expected_form(attribute.unit)) +
                                      ", got " + describe(field.value));
  switch (attribute.unit) {
    case AttributeUnit::duration:
      return static_cast<double>(read_duration(source, field, true));
    case AttributeUnit::bytes:
      return static_cast<double>(read_bytes(source, field));
    case AttributeUnit::count:
      return static_cast<double>(
          read_integer(source, field, static_cast<long long>(attribute.min), static_cast<long long>(attribute.max)));
    default:
      return read_number(source, field);
  }
}

}  // namespace

const sim::AttributeRegistry& calibration_attributes() {
  static const sim::AttributeRegistry registry{models::calibration::kAll,
                                               models::calibration::kPacketTransport,
                                               models::calibration::kDcqcn,
                                               models::calibration::kPfcWatchdog,
                                               models::calibration::kFleetAll,
                                               models::calibration::kCounterAttributes,
                                               models::calibration::kFlowAttributes,
                                               models::calibration::kGpuFailureAll,
                                               calibration::kPipelineAttributes,
                                               calibration::kGroundTruthAttributes,
                                               kLadderAttributes};
  return registry;
}

namespace detail {

sim::Calibration read_calibration(const Source& source, const Field& block) {
  sim::Calibration calibration;
  if (block.value.IsNull()) return calibration;  // `calibration:` with nothing set
  const MapView map(source, block);
  const sim::AttributeRegistry& registry = calibration_attributes();
  for (const Field& field : map.entries()) {
    const std::string name = field.name.substr(block.name.size() + 1);
    const Attribute* attribute = registry.find(name);
    if (!attribute)
      source.fail(field.key_mark,
                  "unknown calibration attribute '" + name + "' (known: " + known_names(registry, name) + ")");
    const double value = read_value(source, field, *attribute);
    if (!(value >= attribute->min && value <= attribute->max))
      source.fail(field.value_mark, "'" + field.name + "' must be between " +
                                        sim::format_attribute_value(*attribute, attribute->min) + " and " +
                                        sim::format_attribute_value(*attribute, attribute->max) + ", got " +
                                        sim::format_attribute_value(*attribute, value));
    calibration.set(*attribute, value);
  }
  return calibration;
}

}  // namespace detail
}  // namespace gauntlet::harness
