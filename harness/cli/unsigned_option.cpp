#include "harness/cli/unsigned_option.hpp"

#include <boost/program_options.hpp>

#include <charconv>

namespace gauntlet::cli {

void validate(boost::any& out, const std::vector<std::string>& values, UnsignedOption*, int) {
  namespace po = boost::program_options;
  po::validators::check_first_occurrence(out);
  const std::string& text = po::validators::get_single_string(values);
  UnsignedOption parsed;
  const char* end = text.data() + text.size();
  // from_chars takes no sign for an unsigned type, and reports out of range.
  const auto [stop, error] = std::from_chars(text.data(), end, parsed.value);
  if (text.empty() || error != std::errc() || stop != end)
    throw po::invalid_option_value(text + " (expected a whole number from 0 to 18446744073709551615)");
  out = parsed;
}

}  // namespace gauntlet::cli
