#pragma once
// An input file's one YAML document, read in bounded time.
#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

#include "harness/scenario/yaml_read.hpp"

namespace gauntlet::harness::yaml_read {

// The file's only document (a null node when the text holds none). Fails at
// the error's position on malformed YAML, at a token no document can begin
// with, and at the second document if there is one; `what` names the file
// in that message ("a scenario file").
YAML::Node load_one_document(const Source& source, const std::string& text, std::string_view what);

}  // namespace gauntlet::harness::yaml_read
