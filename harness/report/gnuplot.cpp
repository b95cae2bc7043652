#include "harness/report/gnuplot.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

extern char** environ;

namespace gauntlet::harness {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

constexpr std::string_view kPlotFolderPrefix = "gauntlet-plot-";

// Plot folders are named gauntlet-plot-PID-XXXXXX; one whose process is gone
// was left by a killed run.
void remove_abandoned_plot_folders(const fs::path& temp) {
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(temp, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kPlotFolderPrefix, 0) != 0) continue;
    const std::string rest = name.substr(kPlotFolderPrefix.size());
    pid_t pid = 0;
    const auto [stop, parse_error] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
    if (parse_error != std::errc() || stop == rest.data() || *stop != '-' || pid <= 0) continue;
    if (::kill(pid, 0) != 0 && errno == ESRCH) fs::remove_all(entry.path(), error);
  }
}

class TempFolder {
 public:
  TempFolder() {
    const fs::path temp = fs::temp_directory_path();
    remove_abandoned_plot_folders(temp);
    std::string pattern = (temp / (std::string(kPlotFolderPrefix) + std::to_string(::getpid()) + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error(std::string("cannot create a temporary folder: ") + std::strerror(errno));
    path_ = pattern;
  }
  ~TempFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

}  // namespace

std::string gnuplot_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "''";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out + "'";
}

std::string render_svg(const std::string& script, const PlotSize& size, const std::string& id_prefix) {
  TempFolder folder;
  const fs::path script_path = folder.path() / "plot.gp";
  const fs::path svg_path = folder.path() / "plot.svg";
  const fs::path errors_path = folder.path() / "errors.txt";
  {
    std::ofstream out(script_path, std::ios::binary);
    // noenhanced: names such as link_loss must not turn into subscripts.
    out << "set terminal svg size " << size.width << "," << size.height
        << " noenhanced font 'sans,11' background rgb 'white'\n"
        << "set output " << gnuplot_quote(svg_path.string()) << "\n"
        << script << "\nset output\n";
    if (!out) throw std::runtime_error("cannot write " + script_path.string());
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, errors_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::string program = "gnuplot", script_arg = script_path.string();
  char* argv[] = {program.data(), script_arg.data(), nullptr};
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  const std::string missing =
      "gnuplot is needed to draw report.html's plots but could not be started; install it (Debian: apt-get install "
      "gnuplot-nox)";
  if (spawned != 0) throw GnuplotMissing(missing + ": " + std::strerror(spawned));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) throw GnuplotMissing(missing);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("gnuplot failed: " + slurp(errors_path));

  std::string svg = slurp(svg_path);
  const std::size_t begin = svg.find("<svg");
  if (begin == std::string::npos) throw std::runtime_error("gnuplot wrote no SVG: " + slurp(errors_path));
  svg.erase(0, begin);
  for (const char* quote : {"'", "\""}) {
    replace_all(svg, std::string("id=") + quote, std::string("id=") + quote + id_prefix);
    replace_all(svg, std::string("href=") + quote + "#", std::string("href=") + quote + "#" + id_prefix);
  }
  replace_all(svg, "url(#", "url(#" + id_prefix);
  return svg;
}

}  // namespace gauntlet::harness
