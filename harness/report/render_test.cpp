// report.html in a real browser: headless Chromium opens the page of a real
// `gauntlet run`, of a month-scale run and of a sweep, takes a screenshot,
// and the test checks that the plots drew (many coloured pixels: tables
// alone are black on white and grey) and that the console stayed clean.
// Skipped only when Chromium is not installed.
#include <gtest/gtest.h>
#include <png.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/report/aggregate.hpp"
#include "harness/report/run_report.hpp"

namespace gauntlet::harness {
namespace {

namespace fs = std::filesystem;

std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser"})
    for (const char* dir : {"/usr/bin", "/usr/local/bin", "/snap/bin"})
      if (fs::exists(fs::path(dir) / name)) return (fs::path(dir) / name).string();
  return "";
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Pixels {
  int width = 0, height = 0;
  std::size_t colourful = 0;  // clearly not white, black or grey
  std::size_t non_white = 0;
};

Pixels read_png(const fs::path& path) {
  Pixels out;
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str())) return out;
  image.format = PNG_FORMAT_RGB;
  std::vector<unsigned char> buffer(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, buffer.data(), 0, nullptr)) return out;
  out.width = static_cast<int>(image.width);
  out.height = static_cast<int>(image.height);
  for (std::size_t i = 0; i + 2 < buffer.size(); i += 3) {
    const int r = buffer[i], g = buffer[i + 1], b = buffer[i + 2];
    const int hi = std::max({r, g, b}), lo = std::min({r, g, b});
    if (lo < 235) ++out.non_white;
    if (hi - lo > 40) ++out.colourful;
  }
  return out;
}

class Browser : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = find_chromium();
    if (chromium_.empty()) GTEST_SKIP() << "chromium is not installed (Debian: apt-get install chromium)";
    dir_ = fs::temp_directory_path() / ("gauntlet-render-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Screenshots the page; returns chromium's stderr.
  std::string screenshot(const fs::path& page, const fs::path& png) {
    const fs::path profile = dir_ / "profile", log = dir_ / "chromium.log";
    fs::create_directories(profile);
    const std::string command = chromium_ +
                                " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
                                "--disable-background-networking --disable-component-update --disable-sync "
                                "--enable-logging=stderr --v=0 --user-data-dir=" +
                                profile.string() + " --screenshot=" + png.string() +
                                " --window-size=1280,2000 file://" + fs::absolute(page).string() + " >" + log.string() +
                                " 2>&1 </dev/null";
    const int status = std::system(command.c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << slurp(log);
    return slurp(log);
  }

  void expect_renders(const fs::path& page, std::size_t min_colourful) {
    const std::string html = slurp(page);
    // Self-contained: nothing to fetch.
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_EQ(html.find("http://www.w3.org/1999/xhtml"), std::string::npos);
    for (const char* remote : {"src=\"http", "href=\"http", "@import", "url(http"})
      EXPECT_EQ(html.find(remote), std::string::npos) << remote;
    EXPECT_NE(html.find("<svg"), std::string::npos);

    const fs::path png = dir_ / (page.stem().string() + ".png");
    const std::string log = screenshot(page, png);
    EXPECT_EQ(log.find("Uncaught"), std::string::npos) << log;
    EXPECT_EQ(log.find("ERROR:CONSOLE"), std::string::npos) << log;
    EXPECT_EQ(log.find(":CONSOLE("), std::string::npos) << log;
    const Pixels pixels = read_png(png);
    ASSERT_EQ(pixels.width, 1280) << "screenshot missing or unreadable";
    EXPECT_GT(pixels.non_white, std::size_t(pixels.width) * pixels.height / 50) << "page looks blank";
    EXPECT_GT(pixels.colourful, min_colourful) << "plots did not draw";
    if (const char* keep = std::getenv("GAUNTLET_KEEP_SCREENSHOTS"))
      fs::copy_file(png, fs::path(keep) / png.filename(), fs::copy_options::overwrite_existing);
  }

  std::string chromium_;
  fs::path dir_;
};

TEST_F(Browser, DemoRunReportRenders) {
  const fs::path out = dir_ / "demo";
  const std::string command = std::string(GAUNTLET_BINARY_DIR) + "/gauntlet run " + GAUNTLET_SOURCE_DIR +
                              "/scenarios/demo.yaml --no-progress --out " + out.string() + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0);
  ASSERT_TRUE(fs::exists(out / "report.html"));
  fs::rename(out / "report.html", dir_ / "demo-run.html");
  // Fault shading, the iteration curve, CDF and bars are all in colour.
  expect_renders(dir_ / "demo-run.html", 20000);
}

TEST_F(Browser, MonthScaleRunReportRenders) {
  RunView run;
  run.scenario = "month";
  run.seed = 1;
  run.sim_seconds = 30 * 86400.0;
  std::uint64_t iteration = 0;
  sim::Nanos t = 0;
  for (int day = 0; day < 30; ++day) {
    // Each day: a steady stretch, then a slow hour after a crash.
    const std::uint64_t steady = (23 * 3600) / 2;
    run.timeline.push_back({iteration, steady, t, 2 * sim::kSecond});
    iteration += steady;
    t += static_cast<sim::Nanos>(steady) * 2 * sim::kSecond;
    run.timeline.push_back({iteration, 1200, t, 3 * sim::kSecond});
    iteration += 1200;
    t += 1200 * 3 * sim::kSecond;
    if (day % 3 == 0) {
      const double start = sim::to_seconds(t) - 3600;
      run.faults.push_back({"f" + std::to_string(day), "gpu_throttle", "h1.gpu0", start, start + 3600, true, false});
    }
  }
  run.iterations_faulty = iteration;
  run.iterations_fault_free = 30 * 86400 / 2;
  run.detector_order = {"falcon", "timeout"};
  for (const std::string& name : run.detector_order) {
    DetectorScore score;
    for (const FaultEpisode& f : run.faults) {
      FaultOutcome o;
      o.id = f.id;
      o.scored = true;
      o.detected = name == "falcon";
      o.detection_latency_s = 30 + f.start_s / 86400;
      score.faults.push_back(o);
      if (o.detected) run.alerts[name].push_back({f.start_s + o.detection_latency_s, name, "fail_slow", {}});
    }
    score.costs = RunCosts{0, static_cast<double>(run.iterations_fault_free - run.iterations_faulty), 0, 0, 0};
    run.scores[name] = score;
  }
  std::ofstream(dir_ / "month.html") << run_report_html(run);
  expect_renders(dir_ / "month.html", 20000);
}

TEST_F(Browser, SweepReportRenders) {
  for (const char* rate : {"0.001", "0.01", "0.05"})
    for (std::uint64_t seed : {1, 2, 3}) {
      const fs::path cell = dir_ / "sweep" / rate / std::to_string(seed);
      fs::create_directories(cell);
      const double r = std::stod(rate);
      nlohmann::ordered_json summary = {
          {"scenario", "demo"},
          {"seed", seed},
          {"detectors",
           {{"falcon",
             {{"precision", 1.0},
              {"recall", std::min(1.0, 20 * r + 0.1 * seed)},
              {"lost_iterations", 100 * r + seed},
              {"false_alerts", 0},
              {"detection_latency_s", {{"mean", 30.0 / (1 + 50 * r)}, {"p50", 30.0 / (1 + 50 * r)}}}}}}}};
      std::ofstream(cell / "summary.json") << summary.dump();
      std::ofstream(cell / "cell.json") << cell_json({"s", "demo", {{"faults.0.rate", rate}}, seed});
    }
  const Aggregate aggregate = aggregate_runs({dir_ / "sweep"});
  ASSERT_EQ(aggregate.rows.size(), 3u);
  std::ofstream(dir_ / "sweep.html") << aggregate_report_html(aggregate, "sweep");
  expect_renders(dir_ / "sweep.html", 3000);
}

}  // namespace
}  // namespace gauntlet::harness
