#pragma once
// Pieces of the self-contained report pages: no scripts, fonts or anything
// fetched over the network; plots are inline SVG drawn by gnuplot.
#include <string>

namespace gauntlet::harness::html {

std::string escape(const std::string& text);
// A whole page: title, inline style sheet, body.
std::string page(const std::string& title, const std::string& body);
// Whether `head`, a file's first bytes, begins a page made by page().
bool is_page(const std::string& head);
// A figure holding an SVG plot (or a note when the plot is empty).
std::string figure(const std::string& svg, const std::string& caption);

}  // namespace gauntlet::harness::html
