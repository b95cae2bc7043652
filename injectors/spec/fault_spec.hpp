#pragma once
// Plain data describing one fault, in the simulator's vocabulary, and the
// spec part of a fault type's descriptor: its targets and its parameters
// with their units and ranges. The same spec drives the simulated effects
// (injectors/sim) and the real drivers (injectors/real); neither is visible
// from here. A fault type's parts are joined by its name in
// injectors/faults, the one layer that sees all of them.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/calibration.hpp"
#include "sim/component_id.hpp"
#include "sim/time.hpp"

namespace gauntlet::injectors {

// A fault's parameter values by name; each type reads the ones it declares.
// A parameter left out reads as zero, empty or false.
class FaultParams {
 public:
  double number(std::string_view name) const;
  sim::Nanos duration(std::string_view name) const;
  const std::string& text(std::string_view name) const;
  bool flag(std::string_view name) const;
  bool has(std::string_view name) const { return values_.find(name) != values_.end(); }

  void set_number(const std::string& name, double value) { values_[name] = value; }
  void set_duration(const std::string& name, sim::Nanos value) { values_[name] = value; }
  void set_text(const std::string& name, std::string value) { values_[name] = std::move(value); }
  void set_flag(const std::string& name, bool value) { values_[name] = Flag{value}; }

 private:
  struct Flag {
    bool value;
  };
  using Value = std::variant<double, sim::Nanos, std::string, Flag>;
  template <typename T>
  const T* find(std::string_view name) const;

  std::map<std::string, Value, std::less<>> values_;
};

struct FaultSpec {
  std::string id;      // "f1", "f2", ... in onset order
  std::string type;    // a registered fault type's name
  std::string target;  // a concrete component id; empty for untargeted types
  sim::Nanos start = 0;
  std::optional<sim::Nanos> duration;  // none: until mitigation removes it or the run ends
  FaultParams params;
  // The scenario declares this one expected (healthy background noise, such
  // as light congestion): it acts as its type does, but ground truth says "no
  // fault", so alerts on it are false. A benign type is benign regardless.
  bool benign = false;
  // What its source calls it (a failure-rate preset's or a trace's
  // category, "Network switch/cable"); empty for faults written out.
  std::string cause;

  std::optional<sim::Nanos> end() const { return duration ? std::optional(start + *duration) : std::nullopt; }
};

// A parameter's kind fixes how it is written and the range it must lie in.
enum class ParamKind {
  fraction,         // a number in [0, 1)
  positive_number,  // a number > 0
  duration,         // a duration >= 0 ("90s", "104us")
  signed_duration,  // a duration, may be negative
  component,        // a component id of the cluster
  boolean,
  choice,  // one of the parameter's `choices`
};
std::string_view param_range_text(ParamKind kind);

struct ParamInfo {
  std::string name{};
  ParamKind kind = ParamKind::fraction;
  bool required = false;
  std::string unit{};  // of the stored value: "" (a ratio), "ns", "Gbit/s"
  std::string help{};
  bool simulated_only = false;         // means nothing on a real host
  std::vector<std::string> choices{};  // a choice's allowed values; the first is the default
  // Values typical of the fault, as a scenario writes them, each valid with
  // any of the other parameters' samples: the scenario fuzzer draws from
  // them. Empty: the fuzzer leaves an optional parameter out.
  std::vector<std::string> samples{};
  // Left out, the parameter takes the run's value of this calibration
  // attribute (its default unless the scenario sets it); null: none.
  const sim::Attribute* calibrated = nullptr;
};

// A value that breaks a rule tying the parameters to each other or to the
// target; `message` follows the parameter's quoted name.
struct ParamProblem {
  std::string param;
  std::string message;
};

struct FaultTypeInfo {
  std::string name{};
  std::string summary{};
  std::vector<sim::ComponentKind> targets{};  // empty: the fault takes no target
  std::vector<ParamInfo> params{};
  bool fail_stop = false;      // the job hangs rather than slows
  bool benign = false;         // an expected change detectors should not report
  bool skews_clocks = false;   // moves telemetry timestamps, so steady runs end at its edges
  bool needs_packets = false;  // only an engine that models packets can act it out
  // The duration parameter at whose period the fault's effect repeats (two
  // simulated changes per period), for the run's event estimate; "" if none.
  std::string repeats_every{};
  // Rules beyond each value's own range, checked on a fault with its target,
  // duration and parameters set (its start not yet). Empty: none.
  std::function<std::optional<ParamProblem>(const FaultSpec&)> check{};
};

}  // namespace gauntlet::injectors
