#pragma once
// Draws plots with gnuplot (Debian: gnuplot-nox) through its SVG terminal.
// gnuplot runs as a child process with an argv (no shell); the script and
// its data blocks go through a private temporary folder.
#include <stdexcept>
#include <string>

namespace gauntlet::harness {

// gnuplot could not be started: the message says what to install.
class GnuplotMissing : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PlotSize {
  int width = 960;
  int height = 360;
};

// Runs `script` (no terminal/output commands: those are prepended) and
// returns the SVG element it drew, without the XML prolog, with its element
// ids prefixed by id_prefix so several plots can share one HTML page.
// Throws GnuplotMissing, or std::runtime_error with gnuplot's own message.
std::string render_svg(const std::string& script, const PlotSize& size, const std::string& id_prefix);

// A string as a gnuplot single-quoted literal.
std::string gnuplot_quote(const std::string& text);

}  // namespace gauntlet::harness
