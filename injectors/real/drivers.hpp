#pragma once
// Real drivers: turn one fault spec into the exact commands that apply,
// verify and revert it on this host. Building a program only reads host
// state; nothing is changed until the executor runs the commands.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "injectors/real/process.hpp"
#include "injectors/spec/fault_spec.hpp"

namespace gauntlet::injectors::real {

// What the kernel offers, found by trying it in a throwaway namespace (root)
// or, without root, guessed from the loaded and built-in modules.
struct Capabilities {
  bool netem = false;
  bool flower = false;
  bool htb = false;
  bool nft = false;
  std::string method;  // "trial" or "modules"
};
Capabilities probe_capabilities();

struct RealFault;
struct DriverContext;
struct FaultProgram;

// The real part of a fault type's descriptor: what it can target on a real
// host and the program that applies it there.
struct RealDriver {
  std::vector<sim::ComponentKind> targets{};
  std::vector<std::string> keys{};  // plan keys it reads beyond the common ones and its parameters
  bool handles_site = false;        // builds `mechanism: site` itself; otherwise site commands run as given
  bool host_wide = false;           // one at a time per host: two would fight over the same resource
  // Plan-time rule on the mapped fault; a message when it cannot be applied.
  std::function<std::optional<std::string>(const RealFault&)> check{};
  std::function<FaultProgram(const RealFault&, const DriverContext&)> build{};
};

// A fault as the drivers need it: the spec plus the real names it maps to.
struct RealFault {
  RealDriver driver;
  FaultSpec spec;
  std::string interface;                     // link_loss, port_flap, stale_flow_table
  int gpu_index = -1;                        // gpu_throttle
  std::map<std::string, std::string> match;  // stale_flow_table: dst src proto dport sport dscp
  std::string mechanism;                     // "" = choose from capabilities
  std::string method;                        // gpu_throttle: power | clocks | locked_clocks
  std::vector<Argv> site_apply;              // mechanism "site": operator's own commands
  std::vector<Argv> site_revert;
};

struct DriverContext {
  Argv prefix;  // prepended to network commands, e.g. {"ip","netns","exec","ns1"}
  Capabilities caps;
  std::string tag;  // unique per plan+fault; names nft tables and cgroups
  bool dry_run = false;
};

struct Check {
  Argv argv;
  std::string expect;  // substring the output must contain ("" = exit 0 is enough)
};

struct TimedCommand {
  sim::Nanos offset = 0;  // from the fault's start
  Argv argv;
  std::string what;
};

struct FaultProgram {
  std::string mechanism;             // recorded in the journal
  std::vector<Argv> apply;           // in order, at the fault's start
  std::vector<TimedCommand> during;  // e.g. the flaps of a port
  std::vector<Argv> revert;          // idempotent, in order
  std::vector<Check> verify;         // after apply: proof that the fault is in place
  std::vector<Check> verify_reverted;
  std::string note;  // queried values and choices, for the audit log
};

// Throws InjectionError (cannot be done here) or SafetyRefusal (will not).
FaultProgram build_program(const RealFault& fault, const DriverContext& context);

// The drivers of the fault types that have one.
FaultProgram link_loss_program(const RealFault& fault, const DriverContext& context);
FaultProgram port_flap_program(const RealFault& fault, const DriverContext& context);
FaultProgram stale_flow_program(const RealFault& fault, const DriverContext& context);
FaultProgram gpu_throttle_program(const RealFault& fault, const DriverContext& context);
FaultProgram cpu_contention_program(const RealFault& fault, const DriverContext& context);

// Host facts used by the drivers and the safety checks.
std::vector<std::string> default_route_interfaces(const Argv& prefix);
bool interface_exists(const Argv& prefix, const std::string& name);
bool interface_admin_up(const Argv& prefix, const std::string& name);

// Names that end up inside tc/nft text must not be able to change its meaning.
bool valid_interface_name(const std::string& name);
bool valid_match_value(const std::string& key, const std::string& value);

}  // namespace gauntlet::injectors::real
