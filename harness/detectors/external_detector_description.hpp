#pragma once
// The parameters an `exec:` detector declares. Asked with a DetectorStart
// whose `describe` is set, a detector answers with one DetectorDescription
// (its start-up reply: name, kind, default and bounds of each parameter) and
// gets no batch. A scenario may then give it values, checked like a
// reference detector's, and a threshold sweep may sweep them; the values
// reach the detector in DetectorStart.parameters.
#include <optional>
#include <string>
#include <vector>

#include "harness/detectors/registry.hpp"
#include "sim/proto/detector_protocol.pb.h"
#include "sim/time.hpp"

namespace gauntlet::harness {

// The declarations as registry parameters; nullopt with *error set when one
// is malformed (no name, a name twice, an unknown kind, a default that is
// not of its kind or outside its bounds, min above max).
std::optional<std::vector<DetectorParamInfo>> declared_params(const protocol::DetectorDescription& description,
                                                              std::string* error);

// Starts the detector `name` ("exec:COMMAND"), asks for its description and
// stops it: its parameters as a DetectorInfo (named `name`, no factory), or
// nullopt with *error set when it could not be started, did not answer
// within `timeout` of wall time, or answered something malformed. A detector
// built before descriptions existed reads the start, sees its input end and
// exits: it declares nothing.
std::optional<DetectorInfo> describe_external_detector(const std::string& name, sim::Nanos timeout, std::string* error);

}  // namespace gauntlet::harness
