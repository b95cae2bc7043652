#include "sim/component_id.hpp"

#include <charconv>

namespace gauntlet::sim {
namespace {

// Reads "<prefix><N>" at the front of text and advances past it.
bool take_indexed(std::string_view& text, std::string_view prefix, int& out) {
  if (!text.starts_with(prefix)) return false;
  const char* begin = text.data() + prefix.size();
  const char* end = text.data() + text.size();
  if (begin == end || *begin < '0' || *begin > '9') return false;
  if (*begin == '0' && begin + 1 != end && begin[1] >= '0' && begin[1] <= '9') return false;  // no leading zeros
  auto [ptr, ec] = std::from_chars(begin, end, out);
  if (ec != std::errc()) return false;
  text.remove_prefix(static_cast<std::size_t>(ptr - text.data()));
  return true;
}

bool take(std::string_view& text, std::string_view literal) {
  if (!text.starts_with(literal)) return false;
  text.remove_prefix(literal.size());
  return true;
}

}  // namespace

std::optional<ComponentId> ComponentId::parse(std::string_view text) {
  ComponentId id;
  std::string_view rest = text;
  if (take_indexed(rest, "leaf", id.leaf)) {
    if (rest.empty()) return make_leaf(id.leaf);
    if (take(rest, "~") && take_indexed(rest, "spine", id.spine) && rest.empty())
      return make_fabric_link(id.leaf, id.spine);
    return std::nullopt;
  }
  if (take_indexed(rest, "spine", id.spine)) return rest.empty() ? std::optional(make_spine(id.spine)) : std::nullopt;
  if (!take_indexed(rest, "h", id.host)) return std::nullopt;
  if (rest.empty()) return make_host(id.host);
  if (!take(rest, ".")) return std::nullopt;
  if (rest == "cpu") return make_cpu(id.host);
  if (rest == "agent") return make_agent(id.host);
  int k = -1;
  if (take_indexed(rest, "gpu", k)) return rest.empty() ? std::optional(make_gpu(id.host, k)) : std::nullopt;
  if (!take_indexed(rest, "nic", k)) return std::nullopt;
  if (rest.empty()) return make_nic(id.host, k);
  if (rest == ".ft") return make_flow_table(id.host, k);
  int leaf = -1;
  if (take(rest, "~") && take_indexed(rest, "leaf", leaf) && rest.empty()) return make_host_link(id.host, k, leaf);
  return std::nullopt;
}

std::string ComponentId::str() const {
  const std::string h = "h" + std::to_string(host);
  switch (kind) {
    case ComponentKind::host:
      return h;
    case ComponentKind::gpu:
      return h + ".gpu" + std::to_string(index);
    case ComponentKind::nic:
      return h + ".nic" + std::to_string(index);
    case ComponentKind::flow_table:
      return h + ".nic" + std::to_string(index) + ".ft";
    case ComponentKind::cpu:
      return h + ".cpu";
    case ComponentKind::agent:
      return h + ".agent";
    case ComponentKind::leaf:
      return "leaf" + std::to_string(leaf);
    case ComponentKind::spine:
      return "spine" + std::to_string(spine);
    case ComponentKind::host_link:
      return h + ".nic" + std::to_string(index) + "~leaf" + std::to_string(leaf);
    case ComponentKind::fabric_link:
      return "leaf" + std::to_string(leaf) + "~spine" + std::to_string(spine);
  }
  return {};
}

std::string_view kind_name(ComponentKind kind) {
  switch (kind) {
    case ComponentKind::host:
      return "host";
    case ComponentKind::gpu:
      return "gpu";
    case ComponentKind::nic:
      return "nic";
    case ComponentKind::flow_table:
      return "flow_table";
    case ComponentKind::cpu:
      return "cpu";
    case ComponentKind::agent:
      return "agent";
    case ComponentKind::leaf:
      return "leaf";
    case ComponentKind::spine:
      return "spine";
    case ComponentKind::host_link:
      return "host_link";
    case ComponentKind::fabric_link:
      return "fabric_link";
  }
  return "unknown";
}

}  // namespace gauntlet::sim
