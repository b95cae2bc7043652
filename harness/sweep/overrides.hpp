#pragma once
// Replacing one node of a scenario's YAML tree by a dotted path.
#include <yaml-cpp/yaml.h>

#include <string>

namespace gauntlet::harness {

// Sets the node at `path` in root to a copy of value. Throws
// std::invalid_argument naming the path segment that does not resolve. A
// missing key is added when it is the last segment (the loader then decides
// whether the scenario accepts it); a name inside a list of names becomes a
// map {name: NAME} when a parameter is set on it.
void apply_override(YAML::Node& root, const std::string& path, const YAML::Node& value);

}  // namespace gauntlet::harness
