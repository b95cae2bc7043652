#include "harness/report/html.hpp"

#include <string_view>

namespace gauntlet::harness::html {

std::string escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {
constexpr std::string_view kPageStart =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>";
constexpr std::string_view kStyleStart =
    "</title>\n<style>\nbody{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;"
    "max-width:1180px;";
}  // namespace

bool is_page(const std::string& head) {
  return head.starts_with(kPageStart) && head.find(kStyleStart) != std::string::npos;
}

std::string page(const std::string& title, const std::string& body) {
  return std::string(kPageStart) + escape(title) + std::string(kStyleStart) +
         "padding:0 16px;color:#222;background:#fff}\n"
         "h1{font-size:1.5em;margin-bottom:4px}h2{font-size:1.15em;margin-top:28px;border-bottom:1px solid #ddd;"
         "padding-bottom:4px}\n"
         ".meta{color:#555;margin:0 0 12px}\n"
         "table{border-collapse:collapse;font-size:0.85em;margin:8px 0}\n"
         ".scroll{overflow-x:auto}\n"
         "th,td{border:1px solid #ccc;padding:4px 8px;text-align:right;white-space:nowrap}\n"
         "th{background:#f0f3f7;white-space:normal;vertical-align:bottom}td.name,th.name{text-align:left}\n"
         "tr:nth-child(even) td{background:#fafafa}\n"
         "figure{margin:12px 0}figure svg{width:100%;height:auto;display:block}\n"
         "figcaption{color:#555;font-size:0.85em}\n"
         ".grid{display:grid;grid-template-columns:1fr 1fr;gap:12px}\n"
         ".note{color:#666;font-style:italic}\n"
         "</style>\n</head>\n<body>\n" +
         body + "</body>\n</html>\n";
}

std::string figure(const std::string& svg, const std::string& caption) {
  return "<figure>\n" + svg + "\n<figcaption>" + escape(caption) + "</figcaption>\n</figure>\n";
}

}  // namespace gauntlet::harness::html
