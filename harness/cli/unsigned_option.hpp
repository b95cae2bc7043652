#pragma once
// boost::program_options reads "-1" into an unsigned option as 2^64-1. Seeds
// and counts use this type instead, which takes decimal digits only.
#include <boost/any.hpp>

#include <string>
#include <vector>

namespace gauntlet::cli {

struct UnsignedOption {
  unsigned long long value = 0;
};

// Found by program_options through argument-dependent lookup.
void validate(boost::any& out, const std::vector<std::string>& values, UnsignedOption*, int);

}  // namespace gauntlet::cli
