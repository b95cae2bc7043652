// scenario-fuzz: random valid scenarios from a seed, each run and checked
// against the invariants every run must keep (harness/soak/case_runner.hpp).
//   scenario-fuzz --seed 7 --cases 20        cases 0..19 of seed 7
//   scenario-fuzz --seed 7 --minutes 60      cases 0, 1, ... for an hour
//   scenario-fuzz --seed 7 --case 12 --print one case, its scenario printed
//   scenario-fuzz --scenario FILE.yaml       the same checks on a scenario file
//   scenario-fuzz --cases 40 --expect-coverage  fails unless every engine, fault type and check was reached
// A failing case prints the one command that reproduces it; exit 1 then.
// The last lines say what the cases reached: cases by engine, faults by
// type and engine (harness/soak/case_summary.hpp).
#include <boost/program_options.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "harness/cli/unsigned_option.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scenario/input_file.hpp"
#include "harness/soak/case_runner.hpp"
#include "harness/soak/case_summary.hpp"

namespace po = boost::program_options;

int main(int argc, char** argv) {
  gauntlet::cli::UnsignedOption seed{1}, cases{10}, only_case, minutes;
  int jobs = 1;
  po::options_description options("scenario-fuzz [options]");
  options.add_options()("help,h", "show this help")("seed", po::value(&seed), "the generator's seed (default 1)")(
      "cases", po::value(&cases), "how many cases, from case 0 (default 10)")(
      "minutes", po::value(&minutes), "run cases 0, 1, ... until this much wall time has passed (instead of --cases)")(
      "case", po::value(&only_case), "run this one case only")("print", "print each case's scenario before running it")(
      "scenario", po::value<std::string>(), "check this scenario file instead of generated cases")(
      "jobs", po::value(&jobs)->default_value(1), "simulations at once (1 to 8)")(
      "expect-coverage", "fail unless the cases reach every engine, catalog fault type and invariant");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "scenario-fuzz: %s\n", e.what());
    return 2;
  }
  if (vm.count("help")) {
    std::cout << options;
    return 0;
  }
  if (jobs < 1 || jobs > 8) {
    std::fprintf(stderr, "scenario-fuzz: --jobs must be 1 to 8\n");
    return 2;
  }
  const gauntlet::harness::DetectorRegistry registry = gauntlet::harness::builtin_detectors();
  if (vm.count("scenario")) {
    const std::string path = vm["scenario"].as<std::string>();
    std::string text;
    try {
      text = gauntlet::harness::read_input_file(path);
    } catch (const gauntlet::harness::InputError& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 2;
    }
    const gauntlet::harness::soak::CaseReport report =
        gauntlet::harness::soak::check_scenario_text(text, registry, jobs);
    for (const std::string& p : report.problems) std::printf("%s: %s\n", path.c_str(), p.c_str());
    std::printf("%s: %s\n", path.c_str(), report.problems.empty() ? "every invariant held" : "FAILED");
    return report.problems.empty() ? 0 : 1;
  }
  const bool one_case = vm.count("case") > 0, timed = vm.count("minutes") > 0;
  const auto started = std::chrono::steady_clock::now();
  const auto elapsed_s = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  unsigned long long ran = 0, failed = 0, iterations = 0, faults = 0;
  const gauntlet::injectors::FaultCatalog catalog = gauntlet::injectors::builtin_fault_catalog();
  gauntlet::harness::soak::CaseSummary summary(catalog);
  for (unsigned long long k = one_case ? only_case.value : 0;; ++k) {
    if (one_case ? ran == 1 : timed ? elapsed_s() >= 60.0 * static_cast<double>(minutes.value) : k >= cases.value)
      break;
    const gauntlet::harness::soak::CaseReport report = gauntlet::harness::soak::run_case(seed.value, k, registry, jobs);
    ++ran;
    summary.add(report);
    iterations += report.iterations;
    faults += report.faults;
    if (vm.count("print")) std::printf("--- case %llu\n%s", k, report.scenario_yaml.c_str());
    if (report.problems.empty()) continue;
    ++failed;
    std::printf("case %llu FAILED:\n", k);
    for (const std::string& p : report.problems) std::printf("  %s\n", p.c_str());
    std::printf("  reproduce: %s --seed %llu --case %llu --print\n", argv[0], seed.value, k);
    std::fflush(stdout);
  }
  const double seconds = elapsed_s();
  std::printf(
      "scenario-fuzz: seed %llu: %llu cases (%llu faults, %llu iterations) in %.1f s, %.1f cases/minute; "
      "%llu failed\n",
      seed.value, ran, faults, iterations, seconds, seconds > 0 ? 60.0 * static_cast<double>(ran) / seconds : 0.0,
      failed);
  std::printf("%s", summary.text().c_str());
  const std::vector<std::string> unreached =
      vm.count("expect-coverage") ? summary.unreached() : std::vector<std::string>{};
  for (const std::string& u : unreached) std::printf("NOT REACHED: %s\n", u.c_str());
  return failed == 0 && unreached.empty() ? 0 : 1;
}
