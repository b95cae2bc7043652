#include "harness/scenario/fault_entries.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "harness/scenario/fault_conflicts.hpp"
#include "harness/scenario/loader.hpp"
#include "sim/rng.hpp"

namespace gauntlet::harness::detail {
namespace {

using injectors::FaultParams;
using injectors::FaultSpec;
using injectors::FaultTypeInfo;
using injectors::ParamInfo;
using injectors::ParamKind;
using sim::ComponentKind;
using sim::Nanos;
using namespace yaml_read;

// Generous for any real study, small enough that a typo such as `every: 1ns`
// fails fast instead of exhausting memory.
constexpr std::size_t kMaxFaults = 1'000'000;
// A Poisson draw that lands on a component that cannot take the fault is
// retried this many times before falling back to listing the eligible ones.
constexpr int kRedrawAttempts = 32;

struct Entry {
  std::size_t index = 0;
  const FaultTypeInfo* info = nullptr;
  YAML::Mark at_mark;
  std::vector<std::string> targets;  // one empty name for reconfigure
  std::optional<Nanos> poisson_mean;
  Nanos at = 0;
  std::optional<Nanos> every;
  std::optional<long long> count;
  std::optional<Nanos> duration;
  FaultParams params;
};

struct Placed {
  FaultSpec fault;
  std::size_t entry;
  std::size_t seq;  // generation order within the entry
};

std::string kinds_text(const std::vector<ComponentKind>& kinds) {
  std::string out;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (i > 0) out += i + 1 == kinds.size() ? " or " : ", ";
    out += sim::kind_name(kinds[i]);
  }
  return out;
}

bool is_glob(const std::string& pattern) { return pattern.find_first_of("*?[") != std::string::npos; }

std::vector<std::string> resolve_targets(const Source& source, const Field& field, const sim::Topology& topology,
                                         const FaultTypeInfo& info) {
  const std::string pattern = read_text(source, field);
  const std::string type(info.name);
  if (is_glob(pattern)) {
    auto matches = expand_target_glob(topology, pattern, info.targets);
    if (matches.empty())
      source.fail(field.value_mark, "target pattern '" + pattern + "' matches no " + kinds_text(info.targets) +
                                        " in this cluster (" + type + " targets a " + kinds_text(info.targets) + ")");
    return matches;
  }
  const auto id = sim::ComponentId::parse(pattern);
  if (!id)
    source.fail(field.value_mark, "target '" + pattern + "' is not a component id (examples: h12, h12.gpu7, " +
                                      "h12.nic3, h12.nic3.ft, leaf3, h12.nic3~leaf3, leaf3~spine1)");
  if (!topology.contains(*id)) source.fail(field.value_mark, "target '" + pattern + "' does not exist in this cluster");
  if (std::find(info.targets.begin(), info.targets.end(), id->kind) == info.targets.end())
    source.fail(field.value_mark, type + " cannot target a " + std::string(sim::kind_name(id->kind)) + " ('" +
                                      pattern + "'); it targets a " + kinds_text(info.targets));
  return {pattern};
}

void store_param(FaultParams& params, std::string_view name, double number, Nanos time, const std::string& text,
                 bool flag) {
  if (name == "rate") params.rate = number;
  else if (name == "period") params.period = time;
  else if (name == "down") params.down = time;
  else if (name == "extra_latency") params.extra_latency = time;
  else if (name == "cap_gbps") params.cap_gbps = number;
  else if (name == "loss") params.loss = number;
  else if (name == "slowdown") params.slowdown = number;
  else if (name == "fallback") params.fallback = text;
  else if (name == "alarm") params.alarm = flag;
  else if (name == "load") params.load = number;
  else if (name == "offset") params.offset = time;
  else if (name == "invalidate_after") params.invalidate_after = time;
  else throw std::logic_error("fault parameter '" + std::string(name) + "' has no FaultParams field");
}

void read_param(const Source& source, const Field& field, const ParamInfo& param, const sim::Topology& topology,
                FaultParams& params) {
  double number = 0;
  Nanos time = 0;
  std::string text;
  bool flag = false;
  switch (param.kind) {
    case ParamKind::fraction:
      number = read_number(source, field);
      if (number < 0 || number >= 1)
        source.fail(field.value_mark, "'" + field.name + "' is a fraction and must be in [0, 1), got " +
                                          field.value.Scalar());
      break;
    case ParamKind::positive_number:
      number = read_number(source, field);
      if (number <= 0)
        source.fail(field.value_mark, "'" + field.name + "' must be greater than zero, got " + field.value.Scalar());
      break;
    case ParamKind::duration: time = read_duration(source, field, true); break;
    case ParamKind::signed_duration: time = read_signed_duration(source, field); break;
    case ParamKind::component: {
      text = read_text(source, field);
      const auto id = sim::ComponentId::parse(text);
      if (!id || !topology.contains(*id))
        source.fail(field.value_mark, "'" + field.name + "': '" + text + "' is not a component of this cluster");
      break;
    }
    case ParamKind::boolean: flag = read_bool(source, field); break;
  }
  store_param(params, param.name, number, time, text, flag);
}

// Constraints that tie several values of one entry together.
void check_type_rules(const Source& source, const MapView& map, const Entry& entry) {
  const FaultParams& p = entry.params;
  switch (entry.info->type) {
    case injectors::FaultType::port_flap:
      if (p.period <= 0) source.fail(map.field("period").value_mark, "'" + map.name() + ".period' must be longer than zero");
      if (p.down <= 0 || p.down >= p.period)
        source.fail(map.field("down").value_mark,
                    "'" + map.name() + ".down' must be longer than zero and shorter than period (" +
                        sim::format_duration(p.period) + ")");
      break;
    case injectors::FaultType::nic_down: {
      if (p.fallback.empty()) break;
      const Field field = map.field("fallback");
      const auto fallback = sim::ComponentId::parse(p.fallback);
      if (fallback->kind != ComponentKind::nic)
        source.fail(field.value_mark, "'" + field.name + "' must be an RNIC such as h3.nic1, got '" + p.fallback + "'");
      for (const std::string& target : entry.targets) {
        if (target == p.fallback)
          source.fail(field.value_mark, "'" + field.name + "' cannot be the failing RNIC " + target + " itself");
        if (sim::ComponentId::parse(target)->host != fallback->host)
          source.fail(field.value_mark, "'" + field.name + "' must be an RNIC of the same host as " + target +
                                            ", got '" + p.fallback + "'");
      }
      break;
    }
    default: break;
  }
}

void read_onset(const Source& source, const Field& field, Nanos run_duration, Entry& entry) {
  entry.at_mark = field.value_mark;
  if (!field.value.IsScalar()) read_duration(source, field, true);  // fails with the type message
  const std::string text = field.value.Scalar();
  if (text.starts_with("poisson(") && text.ends_with(")")) {
    const std::string inner = text.substr(8, text.size() - 9);
    std::string error;
    const auto mean = sim::parse_duration(inner, &error);
    if (!mean) source.fail(field.value_mark, "'" + field.name + "': poisson mean interval: " + error);
    if (*mean == 0) source.fail(field.value_mark, "'" + field.name + "': poisson mean interval must be longer than zero");
    if (static_cast<double>(run_duration) / static_cast<double>(*mean) > static_cast<double>(kMaxFaults))
      source.fail(field.value_mark, "'" + field.name + "' would draw more than " + std::to_string(kMaxFaults) +
                                        " faults over the run");
    entry.poisson_mean = mean;
    return;
  }
  std::string error;
  const auto at = sim::parse_duration(text, &error);
  if (!at) source.fail(field.value_mark, "'" + field.name + "': " + error + ", or poisson(MEAN) for random onsets");
  if (*at >= run_duration)
    source.fail(field.value_mark, "'" + field.name + "': fault starts at " + sim::format_duration(*at) +
                                      ", at or after the end of the run (" + sim::format_duration(run_duration) + ")");
  entry.at = *at;
}

Entry read_entry(const Source& source, const Field& item, std::size_t index, const sim::Topology& topology,
                 Nanos run_duration) {
  const MapView map(source, item);
  Entry entry;
  entry.index = index;

  const Field type_field = map.require("type");
  const std::string type = read_text(source, type_field);
  entry.info = injectors::find_fault_type(type);
  if (!entry.info) {
    std::string known;
    for (const FaultTypeInfo& info : injectors::fault_types()) known += (known.empty() ? "" : ", ") + std::string(info.name);
    source.fail(type_field.value_mark, "unknown fault type '" + type + "' (known: " + known + ")");
  }
  const FaultTypeInfo& info = *entry.info;
  const bool targeted = !info.targets.empty();

  std::vector<std::string> allowed = {"type", "at", "duration", "every", "count"};
  if (targeted) allowed.push_back("target");
  std::string accepted;
  for (const ParamInfo& param : info.params) {
    allowed.emplace_back(param.name);
    accepted += (accepted.empty() ? "" : ", ") + std::string(param.name);
  }
  for (const Field& field : map.entries()) {
    const std::string key = key_of(field);
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    if (key == "target") source.fail(field.key_mark, type + " takes no target");
    source.fail(field.key_mark, "unknown parameter '" + key + "' for fault type " + type + " (" +
                                    (accepted.empty() ? "it takes none" : "accepted: " + accepted) + ")");
  }

  entry.targets = targeted ? resolve_targets(source, map.require("target"), topology, info)
                           : std::vector<std::string>{""};
  for (const ParamInfo& param : info.params) {
    if (map.has(param.name)) read_param(source, map.field(param.name), param, topology, entry.params);
    else if (param.required) map.fail_missing(param.name, " (a parameter of " + type + ")");
  }
  check_type_rules(source, map, entry);

  read_onset(source, map.require("at"), run_duration, entry);
  if (map.has("duration")) entry.duration = read_duration(source, map.field("duration"), false);
  if (entry.duration && map.has("invalidate_after") && entry.params.invalidate_after >= *entry.duration)
    source.fail(map.field("invalidate_after").value_mark,
                "'" + map.name() + ".invalidate_after' must be shorter than the fault's duration (" +
                    sim::format_duration(*entry.duration) + "), or the slow path never shows");
  if (map.has("every")) {
    const Field every = map.field("every");
    if (entry.poisson_mean)
      source.fail(every.key_mark, "'every' cannot be combined with a poisson onset; use one or the other");
    entry.every = read_duration(source, every, false);
  }
  if (map.has("count")) entry.count = read_integer(source, map.field("count"), 1, static_cast<long long>(kMaxFaults));
  return entry;
}

// Fixed and periodic onsets: every matching target at every period.
void place_scheduled(const Source& source, const Entry& entry, Nanos run_duration, std::vector<Placed>& out) {
  std::size_t periods = 1;
  if (entry.every) periods = static_cast<std::size_t>((run_duration - entry.at - 1) / *entry.every) + 1;
  std::size_t total = entry.targets.size();
  if (periods > kMaxFaults / total) source.fail(entry.at_mark, "this entry would produce more than " +
                                                                   std::to_string(kMaxFaults) + " faults");
  total *= periods;
  if (entry.count) total = std::min(total, static_cast<std::size_t>(*entry.count));
  // The total is checked entry by entry, before this one is allocated.
  if (total > kMaxFaults - std::min(out.size(), kMaxFaults))
    source.fail(entry.at_mark, "with this entry the scenario would produce more than " + std::to_string(kMaxFaults) +
                                   " faults");
  for (std::size_t n = 0; n < total; ++n) {
    FaultSpec fault;
    fault.type = entry.info->type;
    fault.target = entry.targets[n % entry.targets.size()];
    fault.start = entry.at + static_cast<Nanos>(n / entry.targets.size()) * entry.every.value_or(0);
    fault.duration = entry.duration;
    fault.params = entry.params;
    out.push_back({std::move(fault), entry.index, n});
  }
}

// Poisson onsets over the whole run, each on a uniformly drawn target among
// those that can still take the fault.
void place_poisson(const Entry& entry, Nanos run_duration, std::uint64_t seed, FaultConflicts& conflicts,
                   std::vector<Placed>& out) {
  sim::Rng rng = sim::RngStreams(seed).stream("faults/" + std::to_string(entry.index));
  const double mean = static_cast<double>(*entry.poisson_mean);
  const std::size_t limit = entry.count ? static_cast<std::size_t>(*entry.count) : kMaxFaults;
  FaultSpec fault;
  fault.type = entry.info->type;
  fault.duration = entry.duration;
  fault.params = entry.params;
  auto eligible = [&](const std::string& target) {
    fault.target = target;
    return !conflicts.check(fault);
  };
  double clock = 0;
  std::size_t placed = 0;
  while (placed < limit) {
    clock += rng.exponential(mean);
    if (clock >= static_cast<double>(run_duration)) break;
    fault.start = std::min(static_cast<Nanos>(std::llround(clock)), run_duration - 1);
    const std::size_t n = entry.targets.size();
    std::optional<std::string> chosen;
    for (int attempt = 0; attempt < kRedrawAttempts && !chosen; ++attempt) {
      const std::string& candidate = entry.targets[rng.below(n)];
      if (eligible(candidate)) chosen = candidate;
    }
    if (!chosen) {
      std::vector<const std::string*> open;
      for (const std::string& target : entry.targets)
        if (eligible(target)) open.push_back(&target);
      if (open.empty()) continue;  // no component can take this fault now
      chosen = *open[rng.below(open.size())];
    }
    fault.target = *chosen;
    conflicts.add(fault, entry.at_mark.line + 1);
    out.push_back({fault, entry.index, placed++});
  }
}

bool onset_order(const Placed& a, const Placed& b) {
  if (a.fault.start != b.fault.start) return a.fault.start < b.fault.start;
  if (a.entry != b.entry) return a.entry < b.entry;
  return a.seq < b.seq;
}

}  // namespace

std::vector<FaultSpec> read_faults(const Source& source, const Field& faults, const sim::Topology& topology,
                                   Nanos run_duration, std::uint64_t seed) {
  std::vector<Entry> entries;
  for (const Field& item : read_sequence(source, faults))
    entries.push_back(read_entry(source, item, entries.size(), topology, run_duration));

  std::vector<Placed> placed;
  for (const Entry& entry : entries)
    if (!entry.poisson_mean) place_scheduled(source, entry, run_duration, placed);
  if (placed.size() > kMaxFaults)
    source.fail(faults.value_mark, "the scenario produces more than " + std::to_string(kMaxFaults) + " faults");
  std::sort(placed.begin(), placed.end(), onset_order);

  FaultConflicts conflicts(run_duration);
  for (const Placed& p : placed) {
    const Entry& entry = entries[p.entry];
    if (auto why = conflicts.check(p.fault)) source.fail(entry.at_mark, *why);
    conflicts.add(p.fault, entry.at_mark.line + 1);
  }
  // Random onsets go last so they steer around the fixed ones.
  for (const Entry& entry : entries)
    if (entry.poisson_mean) place_poisson(entry, run_duration, seed, conflicts, placed);
  std::sort(placed.begin(), placed.end(), onset_order);

  std::vector<FaultSpec> result;
  result.reserve(placed.size());
  for (Placed& p : placed) {
    p.fault.id = "f" + std::to_string(result.size() + 1);
    result.push_back(std::move(p.fault));
  }
  return result;
}

}  // namespace gauntlet::harness::detail
