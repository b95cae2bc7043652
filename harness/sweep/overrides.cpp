#include "harness/sweep/overrides.hpp"

#include <charconv>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

namespace gauntlet::harness {
namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  while (true) {
    const std::size_t dot = path.find('.', from);
    parts.push_back(path.substr(from, dot == std::string::npos ? std::string::npos : dot - from));
    if (dot == std::string::npos) break;
    from = dot + 1;
  }
  for (const std::string& p : parts)
    if (p.empty()) throw std::invalid_argument("'" + path + "' has an empty path segment");
  return parts;
}

std::optional<std::size_t> as_index(const std::string& segment) {
  if (segment.empty() || segment.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  std::size_t index = 0;
  const auto [end, error] = std::from_chars(segment.data(), segment.data() + segment.size(), index);
  // Past size_t no list has that item: the caller says so.
  return error == std::errc() ? index : std::numeric_limits<std::size_t>::max();
}

// Index of the list item named `name`: the scalar itself, a map's `as` (a
// detector listed twice) or, failing that, its `name`.
std::optional<std::size_t> find_named(const YAML::Node& list, const std::string& name) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    if (item.IsMap() && item["as"] && item["as"].IsScalar() && item["as"].Scalar() == name) return i;
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    if (item.IsScalar() && item.Scalar() == name) return i;
    if (item.IsMap() && item["name"] && item["name"].IsScalar() && item["name"].Scalar() == name) return i;
  }
  return std::nullopt;
}

}  // namespace

void apply_override(YAML::Node& root, const std::string& path, const YAML::Node& value) {
  const std::vector<std::string> parts = split_path(path);
  YAML::Node current;
  current.reset(root);
  std::string walked;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& segment = parts[i];
    const bool last = i + 1 == parts.size();
    const std::string where = walked.empty() ? "the scenario" : "'" + walked + "'";
    YAML::Node next;
    if (current.IsMap()) {
      if (!current[segment]) {
        if (!last) throw std::invalid_argument(where + " has no key '" + segment + "'");
        current[segment] = YAML::Clone(value);
        return;
      }
      next.reset(current[segment]);
    } else if (current.IsSequence()) {
      std::optional<std::size_t> index = as_index(segment);
      if (!index) index = find_named(current, segment);
      if (!index || *index >= current.size())
        throw std::invalid_argument(where + " has no item '" + segment + "' (" + std::to_string(current.size()) +
                                    " items; use a 0-based index or a name)");
      if (last) {
        current[*index] = YAML::Clone(value);
        return;
      }
      YAML::Node item = current[*index];
      if (item.IsScalar()) {
        // A bare name gets parameters: rewrite it as {name: NAME}.
        YAML::Node named(YAML::NodeType::Map);
        named["name"] = item.Scalar();
        current[*index] = named;
      }
      next.reset(current[*index]);
    } else {
      throw std::invalid_argument(where + " is a single value; it has no '" + segment + "'");
    }
    if (last) {
      // Replace in the parent so the node (and its style) is fresh.
      if (current.IsMap()) current[segment] = YAML::Clone(value);
      return;
    }
    walked += (walked.empty() ? "" : ".") + segment;
    current.reset(next);
  }
}

}  // namespace gauntlet::harness
