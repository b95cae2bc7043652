// gauntlet chaos and gauntlet recover.
#include <boost/program_options.hpp>

#include <iostream>

#include "harness/chaos/executor.hpp"
#include "harness/chaos/plan.hpp"
#include "harness/cli/command_line.hpp"
#include "harness/cli/commands.hpp"
#include "harness/scenario/input_error.hpp"
#include "injectors/real/journal.hpp"

namespace gauntlet::cli {

namespace po = boost::program_options;

int chaos_command(const Args& args) {
  po::options_description opts(
      "gauntlet chaos PLAN.yaml [--apply] [--journal FILE]\n"
      "Injects the plan's faults on this host. Without --apply it prints every apply and\n"
      "revert command and changes nothing");
  std::string plan_path, netns;
  harness::ChaosOptions options;
  opts.add_options()("help,h", "show this help")("apply", po::bool_switch(&options.apply),
                                                 "really inject (needs root)")(
      "journal", po::value(&options.journal_path), "journal file (default results/chaos/<name>/journal.jsonl)")(
      "out", po::value(&options.out_dir), "directory for faults.jsonl and audit.log (default: the journal's)")(
      "netns", po::value(&netns), "run the network commands inside this network namespace");
  po::options_description hidden;
  hidden.add_options()("plan", po::value(&plan_path));
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("plan", 1);
  po::variables_map vm;
  if (const int stop = parse_options(args, opts, all, &pos, vm); stop >= 0) return stop;
  if (plan_path.empty()) {
    std::cerr << "gauntlet chaos: missing PLAN.yaml\n" << opts << "\n";
    return kExitBadInput;
  }
  if (!netns.empty()) options.prefix = {"ip", "netns", "exec", netns};
  try {
    harness::ChaosPlan plan = harness::load_chaos_plan(plan_path);
    return harness::execute_chaos_plan(plan, options, std::cout, std::cerr);
  } catch (const harness::InputError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  }
}

int recover_command(const Args& args) {
  po::options_description opts(
      "gauntlet recover --journal FILE\n"
      "Reverts every fault the chaos journal lists as applied and not reverted. Safe to repeat");
  std::string journal;
  opts.add_options()("help,h", "show this help")("journal", po::value(&journal)->required(), "chaos journal");
  po::variables_map vm;
  if (const int stop = parse_options(args, opts, opts, nullptr, vm); stop >= 0) return stop;
  try {
    std::string report;
    const injectors::real::RecoverResult result = injectors::real::revert_pending(journal, "recover", &report);
    std::cout << report;
    if (result.reverted == 0 && result.failed == 0)
      std::cout << "nothing to recover: every applied fault in " + journal + " is already reverted\n";
    if (result.reverted > 0)
      std::cout << "reverted " + std::to_string(result.reverted) + " fault(s) listed in " + journal + "\n";
    if (result.failed > 0) {
      std::cerr << "gauntlet recover: " << result.failed << " fault(s) could not be reverted and are still listed in "
                << journal << "; fix the cause and run recover again\n";
      return kExitRunFailed;
    }
    return kExitOk;
  } catch (const injectors::real::JournalError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "gauntlet recover: " << e.what() << "\n";
    return kExitBadInput;
  }
}

}  // namespace gauntlet::cli
