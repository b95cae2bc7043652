#include "harness/cli/command_line.hpp"

#include <cstdio>
#include <iostream>

namespace gauntlet::cli {

namespace po = boost::program_options;

int parse_options(const Args& args, const po::options_description& shown, const po::options_description& all,
                  const po::positional_options_description* positional, po::variables_map& vm) {
  try {
    po::command_line_parser parser(args);
    parser.options(all);
    if (positional) parser.positional(*positional);
    po::store(parser.run(), vm);
    // --help before the checks of required options, which it needs not give.
    if (vm.count("help")) {
      std::cout << shown;
      return kExitOk;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "%s\n\n", e.what());
    std::cerr << shown;
    return kExitBadInput;
  }
  return -1;
}

}  // namespace gauntlet::cli
