#include "harness/scenario/fault_entries.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "harness/scenario/failure_rates.hpp"
#include "harness/scenario/fault_conflicts.hpp"
#include "harness/scenario/fault_params_read.hpp"
#include "harness/scenario/loader.hpp"
#include "harness/scenario/trace_faults.hpp"
#include "sim/rng.hpp"

namespace gauntlet::harness::detail {
namespace {

using injectors::FaultCatalog;
using injectors::FaultParams;
using injectors::FaultSpec;
using injectors::FaultTypeInfo;
using injectors::ParamInfo;
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
  std::optional<RepairTime> repair_draw;  // drawn per fault instead of a fixed duration
  std::string stream;                     // the RNG stream of its draws
  FaultParams params;
  bool benign = false;
  std::string cause;  // a rate's category
};

struct Placed {
  FaultSpec fault;
  std::size_t entry;  // position in the list of entries
  std::size_t seq;    // generation order within the entry
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
    source.fail(field.value_mark, type + " cannot target a " + std::string(sim::kind_name(id->kind)) + " ('" + pattern +
                                      "'); it targets a " + kinds_text(info.targets));
  return {pattern};
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
    if (*mean == 0)
      source.fail(field.value_mark, "'" + field.name + "': poisson mean interval must be longer than zero");
    if (static_cast<double>(run_duration) / static_cast<double>(*mean) > static_cast<double>(kMaxFaults))
      source.fail(field.value_mark,
                  "'" + field.name + "' would draw more than " + std::to_string(kMaxFaults) + " faults over the run");
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
                 Nanos run_duration, const FaultCatalog& types, std::string_view engine) {
  const MapView map(source, item);
  Entry entry;
  entry.index = index;
  entry.stream = "faults/" + std::to_string(index);

  const Field type_field = map.require("type");
  const std::string type = read_text(source, type_field);
  const injectors::FaultDescriptor* descriptor = types.find(type);
  if (!descriptor)
    source.fail(type_field.value_mark, "unknown fault type '" + type + "' (known: " + types.names() + ")");
  if (descriptor->spec.needs_packets && engine != "packet" && engine != "hybrid")
    source.fail(type_field.value_mark,
                "fault type '" + type +
                    "' acts on packets: it runs on engine: packet or hybrid only (this scenario runs engine: " +
                    std::string(engine) + ")");
  entry.info = &descriptor->spec;
  const FaultTypeInfo& info = *entry.info;
  const bool targeted = !info.targets.empty();

  std::vector<std::string> allowed = {"type", "at", "duration", "every", "count", "benign"};
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

  entry.targets =
      targeted ? resolve_targets(source, map.require("target"), topology, info) : std::vector<std::string>{""};
  entry.params = read_fault_params(source, map, info, &topology);
  read_onset(source, map.require("at"), run_duration, entry);
  if (map.has("duration")) entry.duration = read_duration(source, map.field("duration"), false);
  for (const std::string& target : entry.targets) {
    FaultSpec candidate;
    candidate.type = info.name;
    candidate.target = target;
    candidate.duration = entry.duration;
    candidate.params = entry.params;
    check_fault_rules(source, map, info, candidate);
  }
  if (map.has("every")) {
    const Field every = map.field("every");
    if (entry.poisson_mean)
      source.fail(every.key_mark, "'every' cannot be combined with a poisson onset; use one or the other");
    entry.every = read_duration(source, every, false);
  }
  if (map.has("count")) entry.count = read_integer(source, map.field("count"), 1, static_cast<long long>(kMaxFaults));
  if (map.has("benign")) entry.benign = read_bool(source, map.field("benign"));
  return entry;
}

// Fixed and periodic onsets: every matching target at every period.
void place_scheduled(const Source& source, const Entry& entry, std::size_t position, Nanos run_duration,
                     std::vector<Placed>& out) {
  std::size_t periods = 1;
  if (entry.every) periods = static_cast<std::size_t>((run_duration - entry.at - 1) / *entry.every) + 1;
  std::size_t total = entry.targets.size();
  if (periods > kMaxFaults / total)
    source.fail(entry.at_mark, "this entry would produce more than " + std::to_string(kMaxFaults) + " faults");
  total *= periods;
  if (entry.count) total = std::min(total, static_cast<std::size_t>(*entry.count));
  // The total is checked entry by entry, before this one is allocated.
  if (total > kMaxFaults - std::min(out.size(), kMaxFaults))
    source.fail(entry.at_mark,
                "with this entry the scenario would produce more than " + std::to_string(kMaxFaults) + " faults");
  for (std::size_t n = 0; n < total; ++n) {
    FaultSpec fault;
    fault.type = entry.info->name;
    fault.target = entry.targets[n % entry.targets.size()];
    fault.start = entry.at + static_cast<Nanos>(n / entry.targets.size()) * entry.every.value_or(0);
    fault.duration = entry.duration;
    fault.params = entry.params;
    fault.benign = entry.benign;
    out.push_back({std::move(fault), position, n});
  }
}

// Poisson onsets over the whole run, each on a uniformly drawn target among
// those that can still take the fault.
void place_poisson(const Entry& entry, std::size_t position, Nanos run_duration, std::uint64_t seed,
                   FaultConflicts& conflicts, std::vector<Placed>& out) {
  sim::Rng rng = sim::RngStreams(seed).stream(entry.stream);
  const double mean = static_cast<double>(*entry.poisson_mean);
  const std::size_t limit = entry.count ? static_cast<std::size_t>(*entry.count) : kMaxFaults;
  FaultSpec fault;
  fault.type = entry.info->name;
  fault.duration = entry.duration;
  fault.params = entry.params;
  fault.benign = entry.benign;
  fault.cause = entry.cause;
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
    if (entry.repair_draw) fault.duration = entry.repair_draw->draw(rng);
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
    out.push_back({fault, position, placed++});
  }
}

// `{preset: NAME, repair: DURATION}`: a published rate; its sources publish
// no repair times, so the scenario states one.
std::vector<FailureRate> read_preset_entry(const Source& source, const MapView& map) {
  map.allow_only({"preset", "repair"}, " (keys of a preset entry)");
  const Field name_field = map.require("preset");
  const std::string name = read_text(source, name_field);
  auto preset = published_preset(name);
  if (!preset)
    source.fail(name_field.value_mark,
                "unknown failure-rate preset '" + name + "' (known: " + published_preset_names() + ")");
  const Nanos repair = read_duration(source, map.require("repair"), false);
  for (FailureRate& rate : preset->rates) rate.repair.fixed = repair;
  return std::move(preset->rates);
}

// One Poisson entry per rate, over every component of the kind its type
// fails, at the rate per component times their number.
std::vector<Entry> rate_entries(const Source& source, const Field& item, std::size_t index,
                                const std::vector<FailureRate>& rates, const sim::Topology& topology,
                                Nanos run_duration, const FaultCatalog& types) {
  std::vector<Entry> entries;
  const double gpus_per_host = topology.shape().gpus_per_host;
  double total_per_day = 0;
  for (std::size_t k = 0; k < rates.size(); ++k) {
    const FailureRate& rate = rates[k];
    Entry entry;
    entry.index = index;
    entry.stream = "faults/" + std::to_string(index) + "/" + std::to_string(k);
    entry.at_mark = item.value_mark;
    entry.info = &types.spec(rate.type);
    const sim::ComponentKind kind = entry.info->targets.front();
    entry.targets = expand_target_glob(topology, "*", {kind});
    double per_component = rate.per_day;
    if (rate.per == RatePer::gpu && kind == sim::ComponentKind::host) per_component *= gpus_per_host;
    if (rate.per == RatePer::host && kind == sim::ComponentKind::gpu) per_component /= gpus_per_host;
    double per_day = per_component * static_cast<double>(entry.targets.size());
    // A rate per GPU or host of a type that fails links or RNICs: the
    // cluster's GPUs (or hosts) set the total, spread over those targets.
    if (kind != sim::ComponentKind::gpu && kind != sim::ComponentKind::host)
      per_day = rate.per_day * topology.hosts() * (rate.per == RatePer::gpu ? gpus_per_host : 1.0);
    if (per_day <= 0) continue;
    total_per_day += per_day;
    entry.poisson_mean = std::max<Nanos>(1, std::llround(static_cast<double>(sim::kDay) / per_day));
    entry.params = rate.params;
    entry.cause = rate.category;
    if (rate.repair.fixed)
      entry.duration = rate.repair.fixed;
    else
      entry.repair_draw = rate.repair;
    entries.push_back(std::move(entry));
  }
  if (total_per_day * static_cast<double>(run_duration) / static_cast<double>(sim::kDay) >
      static_cast<double>(kMaxFaults))
    source.fail(item.value_mark,
                "this entry would draw more than " + std::to_string(kMaxFaults) + " faults over the run");
  return entries;
}

bool onset_order(const Placed& a, const Placed& b) {
  if (a.fault.start != b.fault.start) return a.fault.start < b.fault.start;
  if (a.entry != b.entry) return a.entry < b.entry;
  return a.seq < b.seq;
}

}  // namespace

std::vector<FaultSpec> read_faults(const Source& source, const Field& faults, const sim::Topology& topology,
                                   Nanos run_duration, std::uint64_t seed, const FaultCatalog& types,
                                   std::string_view engine) {
  std::vector<Entry> entries;
  std::vector<Placed> placed;
  std::size_t index = 0;
  for (const Field& item : read_sequence(source, faults)) {
    const YAML::Node& node = item.value;  // const: a lookup must not add the key
    const bool is_map = node.IsMap();
    if (is_map && (node["preset"] || (node["from_trace"] && node["fit"]))) {
      const MapView map(source, item);
      const std::vector<FailureRate> rates =
          node["preset"] ? read_preset_entry(source, map) : fit_trace_entry(source, map, topology, types);
      for (Entry& entry : rate_entries(source, item, index, rates, topology, run_duration, types))
        entries.push_back(std::move(entry));
    } else if (is_map && node["from_trace"]) {
      // Replayed faults are fixed onsets, checked against the others below.
      Entry entry;
      entry.index = index;
      entry.at_mark = item.value_mark;
      std::size_t seq = 0;
      for (FaultSpec& fault :
           read_trace_entry(source, MapView(source, item), index, topology, run_duration, seed, types)) {
        if (placed.size() >= kMaxFaults)
          source.fail(item.value_mark,
                      "with this entry the scenario would produce more than " + std::to_string(kMaxFaults) + " faults");
        placed.push_back({std::move(fault), entries.size(), seq++});
      }
      entries.push_back(std::move(entry));
    } else {
      entries.push_back(read_entry(source, item, index, topology, run_duration, types, engine));
    }
    ++index;
  }

  for (std::size_t position = 0; position < entries.size(); ++position)
    if (!entries[position].poisson_mean && entries[position].info)
      place_scheduled(source, entries[position], position, run_duration, placed);
  if (placed.size() > kMaxFaults)
    source.fail(faults.value_mark, "the scenario produces more than " + std::to_string(kMaxFaults) + " faults");
  std::sort(placed.begin(), placed.end(), onset_order);

  FaultConflicts conflicts(run_duration, types);
  for (const Placed& p : placed) {
    const Entry& entry = entries[p.entry];
    if (auto why = conflicts.check(p.fault)) source.fail(entry.at_mark, *why);
    conflicts.add(p.fault, entry.at_mark.line + 1);
  }
  // Random onsets go last so they steer around the fixed ones.
  for (std::size_t position = 0; position < entries.size(); ++position)
    if (entries[position].poisson_mean)
      place_poisson(entries[position], position, run_duration, seed, conflicts, placed);
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
