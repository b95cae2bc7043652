#pragma once
// One way for every command to read its command line, so that usage errors
// and --help look and exit alike.
#include <boost/program_options.hpp>

#include "harness/cli/commands.hpp"

namespace gauntlet::cli {

// Parses args into vm against `all` (with `positional`, if any). A usage
// error is printed with `shown`, the options a user sees, and gives
// kExitBadInput; --help prints them and gives kExitOk; otherwise -1.
int parse_options(const Args& args, const boost::program_options::options_description& shown,
                  const boost::program_options::options_description& all,
                  const boost::program_options::positional_options_description* positional,
                  boost::program_options::variables_map& vm);

}  // namespace gauntlet::cli
