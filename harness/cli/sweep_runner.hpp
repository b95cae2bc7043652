#pragma once
// The sweep machinery behind `gauntlet sweep` (options, sharding, cluster
// launchers, local workers, the merge), shared with commands that are a
// sweep plus a step after the merge (`gauntlet plan capacity`).
#include <boost/program_options.hpp>

#include <functional>
#include <string>
#include <vector>

#include "harness/cli/commands.hpp"
#include "harness/detectors/registry.hpp"
#include "harness/report/aggregate.hpp"
#include "harness/sweep/sweep_spec.hpp"

namespace gauntlet::cli {

struct SweepFlavour {
  std::string command = "gauntlet sweep";  // in usage and messages
  std::string file_label = "SWEEP.yaml";
  // More options; a `gather` flag among them merges what the folder holds
  // without running any cell.
  std::function<void(boost::program_options::options_description&)> add_options;
  // After a whole sweep is merged: prints what the command adds and returns
  // HTML sections for report.html and the exit code. Unset: the merged table.
  std::function<int(const harness::SweepSpec&, const harness::Aggregate&, const harness::DetectorRegistry&,
                    const boost::program_options::variables_map&, std::string& sections)>
      after_merge;
  // The emitted launchers' gather step (arguments after the binary) and the
  // command a shard names for the merge; unset: gauntlet report OUT.
  std::function<std::vector<std::string>(const std::string& file, const std::string& out)> gather_args;
  std::function<std::string(const std::string& file, const std::string& out)> gather_hint =
      [](const std::string&, const std::string& out) { return "gauntlet report " + out; };
};

int run_sweep(const Args& args, const SweepFlavour& flavour);

}  // namespace gauntlet::cli
