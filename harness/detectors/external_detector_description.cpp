#include "harness/detectors/external_detector_description.hpp"

#include <set>

#include "harness/detectors/external_detector.hpp"
#include "harness/detectors/external_detector_process.hpp"

namespace gauntlet::harness {
namespace {

constexpr std::size_t kMaxDescriptionBytes = 1u << 20;

std::optional<DetectorParamKind> kind_of(protocol::ParameterDeclaration::Kind kind) {
  switch (kind) {
    case protocol::ParameterDeclaration::NUMBER:
      return DetectorParamKind::number;
    case protocol::ParameterDeclaration::INTEGER:
      return DetectorParamKind::integer;
    case protocol::ParameterDeclaration::DURATION:
      return DetectorParamKind::duration;
    default:
      return std::nullopt;
  }
}

bool plain_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

}  // namespace

std::optional<std::vector<DetectorParamInfo>> declared_params(const protocol::DetectorDescription& description,
                                                              std::string* error) {
  std::vector<DetectorParamInfo> params;
  std::set<std::string> seen;
  for (const protocol::ParameterDeclaration& d : description.parameters()) {
    const std::string where = "parameter '" + d.name() + "': ";
    if (!plain_name(d.name())) {
      *error = where + "a name is 1 to 64 of a-z, 0-9 and '_'";
      return std::nullopt;
    }
    if (d.name() == "name" || d.name() == "as" || d.name() == "reply_timeout" || d.name() == "flow_records") {
      *error = where + "the name is gauntlet's (name, as, reply_timeout, flow_records)";
      return std::nullopt;
    }
    if (!seen.insert(d.name()).second) {
      *error = where + "declared twice";
      return std::nullopt;
    }
    const auto kind = kind_of(d.kind());
    if (!kind) {
      *error = where + "its kind is not NUMBER, INTEGER or DURATION";
      return std::nullopt;
    }
    if (d.has_min() && d.has_max() && d.min() > d.max()) {
      *error = where + "min above max";
      return std::nullopt;
    }
    params.push_back(declare_param(d.name(), *kind, d.default_value(), d.help(),
                                   d.has_min() ? std::optional<double>(d.min()) : std::nullopt,
                                   d.has_max() ? std::optional<double>(d.max()) : std::nullopt));
  }
  // Each default must be a value of its own declaration.
  DetectorInfo info;
  info.name = "its declaration";
  info.params = params;
  std::string why;
  if (!DetectorRegistry().resolve(info, {}, &why)) {
    *error = "a default is not a value it accepts: " + why;
    return std::nullopt;
  }
  return params;
}

std::optional<DetectorInfo> describe_external_detector(const std::string& name, sim::Nanos timeout,
                                                       std::string* error) {
  std::string why;
  auto argv = split_command_line(name.substr(std::string(ExternalDetector::kPrefix).size()), &why);
  if (!argv) {
    *error = "cannot parse the command: " + why;
    return std::nullopt;
  }
  DetectorProcess process(std::move(*argv), timeout);
  if (!process.start_error().empty()) {
    *error = process.start_error();
    return std::nullopt;
  }
  protocol::DetectorStart start;
  start.set_protocol_version(protocol::VERSION_CURRENT);
  start.set_detector(name);
  start.set_describe(true);
  const sim::Nanos deadline = wall_clock_now() + timeout;
  std::optional<std::string> frame;
  if (process.write_frame(start.SerializeAsString(), deadline, &why)) {
    process.close_input();
    frame = process.read_frame(deadline, kMaxDescriptionBytes, &why);
  }
  process.stop(true);
  if (!frame) {
    *error = "no description of its parameters (its start-up reply to a DetectorStart with describe set): " + why;
    return std::nullopt;
  }
  protocol::DetectorDescription description;
  if (!description.ParseFromString(*frame)) {
    *error = "its start-up reply is not a DetectorDescription";
    return std::nullopt;
  }
  auto params = declared_params(description, error);
  if (!params) return std::nullopt;
  DetectorInfo info;
  info.name = name;
  info.summary = "an exec: detector's declared parameters";
  info.params = std::move(*params);
  return info;
}

}  // namespace gauntlet::harness
