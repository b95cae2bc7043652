// gauntlet calibrate [--out FILE] [--quick] [--seed N] | --summary [FILE]: runs the packet
// engine's micro-scenarios (loss x packets in flight, offered load x ECN
// setting, a PFC storm) and writes the network calibration table the flow
// engine reads (sim/network_calibration.hpp). The shipped table,
// data/calibration/network.json, is this command's output with its defaults.
#include <boost/program_options.hpp>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

#include "harness/cli/commands.hpp"
#include "harness/cli/scenario_options.hpp"
#include "harness/cli/unsigned_option.hpp"
#include "harness/runner/results_folder.hpp"
#include "harness/scenario/input_file.hpp"
#include "sim/packet/packet_calibration.hpp"

namespace gauntlet::cli {
namespace {

std::string format(const char* pattern, double a, double b = 0, double c = 0) {
  char text[96];
  std::snprintf(text, sizeof text, pattern, a, b, c);
  return text;
}

// The table as docs/engines.md shows it: goodput and resends per loss rate and
// packets in flight, queueing, marks and CNPs per offered load and ECN
// setting, and the storm's head-of-line blocking.
std::string summary(const sim::NetworkCalibration& t) {
  std::vector<double> rates, bdps;
  for (const sim::LossPoint& p : t.loss) {
    if (std::find(rates.begin(), rates.end(), p.loss) == rates.end()) rates.push_back(p.loss);
    if (std::find(bdps.begin(), bdps.end(), p.bdp_packets) == bdps.end()) bdps.push_back(p.bdp_packets);
  }
  std::string out = "| loss | ";
  for (double b : bdps) out += format("%g packets in flight | ", b);
  out += "\n|---|";
  for (std::size_t i = 0; i < bdps.size(); ++i) out += "---|";
  out += "\n";
  for (double r : rates) {
    out += format("| %g | ", r);
    for (double b : bdps) {
      const sim::LossResponse x = t.loss_response(r, b);
      out += format("%.3f goodput, %.3g resent, %.2g NAKs per packet | ", x.goodput, x.retransmitted_per_packet,
                    x.naks_per_packet);
    }
    out += "\n";
  }
  out += "\n| offered load | ";
  for (const sim::EcnProfile& p : t.ecn)
    out += format("Kmin %g KB, Kmax %g KB, Pmax %g | ", p.kmin_bytes / 1e3, p.kmax_bytes / 1e3, p.pmax);
  out += "\n|---|";
  for (std::size_t i = 0; i < t.ecn.size(); ++i) out += "---|";
  out += "\n";
  for (std::size_t j = 0; j < t.ecn.front().points.size(); ++j) {
    out += format("| %g | ", t.ecn.front().points[j].offered_load);
    for (const sim::EcnProfile& p : t.ecn) {
      const sim::LoadPoint& x = p.points.at(j);
      out += format("%.2f us, %.3g%% marked, ", x.queueing_delay_ns / 1e3, 100 * x.ecn_marked_per_packet) +
             format("%.0f CNPs/s | ", x.cnp_per_second);
    }
    out += "\n";
  }
  out += "\n| flows to the storming RNIC | sender paused | its flow to an innocent peer |\n|---|---|---|\n";
  for (const sim::StormPoint& p : t.pfc_storm)
    out += format("| %.0f | %.0f%% of the time | %.0f%% of the line |\n", p.flows_to_storming_rnic,
                  100 * p.pause_fraction, 100 * p.victim_goodput);
  return out;
}

}  // namespace

int calibrate_command(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("gauntlet calibrate [options]");
  options.add_options()("help,h", "show this help")(
      "out", po::value<std::string>(), "write the table to FILE (replaced at once); default: standard output")(
      "quick", "a coarser grid over shorter windows (seconds instead of a minute; not the shipped table)")(
      "seed", po::value<UnsignedOption>(), "seed every micro-scenario derives its own from (default 1)")(
      "summary", po::value<std::string>()->implicit_value(""),
      "print a table's summary as Markdown instead (the shipped one, or the table FILE), running nothing");
  po::variables_map vm;
  if (const int stop = parse_options(args, options, options, nullptr, vm); stop >= 0) return stop;
  if (vm.count("summary")) {
    const std::string file = vm["summary"].as<std::string>();
    const sim::NetworkCalibration table = file.empty()
                                              ? sim::shipped_network_calibration()
                                              : sim::parse_network_calibration(harness::read_input_file(file), file);
    std::fputs(summary(table).c_str(), stdout);
    return kExitOk;
  }
  // Checked and locked before an hour of micro-scenarios: a table file is
  // replaced only when it is one.
  std::optional<harness::ClaimedFile> out;
  if (vm.count("out")) {
    const std::string file = vm["out"].as<std::string>();
    try {
      out.emplace(harness::ClaimedFile::claim(file, [](const std::string& head) {
        return head.find("\"format\": \"gauntlet network calibration 1\"") != std::string::npos;
      }));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gauntlet calibrate: --out %s: %s\n", file.c_str(), e.what());
      return kExitBadInput;
    }
  }
  const bool quick = vm.count("quick") > 0;
  const std::uint64_t seed = vm.count("seed") ? vm["seed"].as<UnsignedOption>().value : 1;
  const sim::CalibrationGrid grid = quick ? sim::quick_calibration_grid() : sim::full_calibration_grid();
  sim::NetworkCalibration table = sim::run_calibration(grid, seed, [](int done, int total) {
    std::fprintf(stderr, "\rcalibrating: %d of %d micro-scenarios", done, total);
    if (done == total) std::fprintf(stderr, "\n");
  });
  // What produced the table, without where it was written: the same
  // options give the same bytes.
  table.command = "gauntlet calibrate --seed " + std::to_string(seed) + (quick ? " --quick" : "");
  table.quick = quick;
  const std::string text = sim::to_json(table);
  if (out)
    out->replace_with(text);
  else
    std::fputs(text.c_str(), stdout);
  return kExitOk;
}

}  // namespace gauntlet::cli
