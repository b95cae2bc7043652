// Emitted cluster launchers: no value from a sweep file or the command line
// can end a line of the Slurm script or the Kubernetes manifest, so none can
// add a command or a key of its own.
#include <sstream>
#include <stdexcept>

#include "harness/sweep/emit.hpp"
#include "outputs_shell.hpp"

namespace hostile_outputs {
namespace {

const std::string kPayload = "/x\ntouch PWNED\n#";

// A line that is the payload's command: the shell would run it.
bool has_injected_line(const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t start = line.find_first_not_of(" \t");
    if (start != std::string::npos && line.compare(start, 5, "touch") == 0) return true;
  }
  return false;
}

// Issue 31, case 16, through the command line.
TEST(EmitInjection, ASweepsOutCannotAddALineToTheLaunchers) {
  const fs::path dir = scratch("emit-injection");
  write(dir / "tiny.yaml", tiny_scenario());
  write(dir / "sweep.yaml", "name: tiny-sweep\nscenarios: [tiny.yaml]\nseeds: {first: 1, count: 2}\nout: \"" +
                                std::string("/x\\ntouch PWNED\\n#") + "\"\n");
  // Kubernetes pods write to the claim's mount point, not the file's out.
  for (const char* emit : {"slurm", "k8s"}) {
    const Result r = shell(binary() + " sweep " + (dir / "sweep.yaml").string() + " --emit " + emit);
    EXPECT_FALSE(has_injected_line(r.out)) << emit << ":\n" << r.out;
    EXPECT_EQ(r.exit_code, std::string(emit) == "slurm" ? 2 : 0) << emit << ": " << r.err;
  }
}

TEST(EmitInjection, NoLauncherOptionCanAddALine) {
  const fs::path dir = scratch("emit-options");
  write(dir / "tiny.yaml", tiny_scenario());
  write(dir / "sweep.yaml", "name: tiny-sweep\nscenarios: [tiny.yaml]\nseeds: {first: 1, count: 2}\n");
  for (const char* option :
       {"--out", "--binary", "--image", "--workdir", "--claim", "--storage", "--cpus", "--time", "--memory"})
    for (const char* emit : {"slurm", "k8s"}) {
      const Result r = shell(binary() + " sweep " + (dir / "sweep.yaml").string() + " --emit " + emit + " " + option +
                             " $'/x\\ntouch PWNED\\n#'");
      EXPECT_FALSE(has_injected_line(r.out)) << option << " " << emit << ":\n" << r.out;
      EXPECT_EQ(r.exit_code, 2) << option << " " << emit << ": " << r.err;
    }
}

// The emitters refuse what the command line would have refused, whatever reaches them.
TEST(EmitInjection, TheEmittersKeepEveryValueOnItsLine) {
  gauntlet::harness::EmitOptions o;
  for (std::string* field : {&o.sweep_path, &o.sweep_name, &o.out, &o.binary, &o.image, &o.working_dir, &o.claim,
                             &o.storage, &o.cpus, &o.time_limit, &o.task_unit})
    *field = kPayload;
  o.gather_args = {"report", kPayload};
  o.memory = "4Gi";
  o.shards = 2;
  o.cells = 2;
  EXPECT_NE(gauntlet::harness::emit_options_error(o), "");
  EXPECT_THROW(gauntlet::harness::slurm_script(o), std::invalid_argument);
  EXPECT_THROW(gauntlet::harness::kubernetes_manifest(o), std::invalid_argument);
  // Quotes and backslashes stay inside their values.
  gauntlet::harness::EmitOptions quoted;
  quoted.sweep_path = "it's \"a\" \\ sweep.yaml";
  quoted.out = "/shared/o'ut";
  const std::string script = gauntlet::harness::slurm_script(quoted);
  EXPECT_NE(script.find("'it'\\''s \"a\" \\ sweep.yaml'"), std::string::npos) << script;
  const std::string manifest = gauntlet::harness::kubernetes_manifest(quoted);
  EXPECT_NE(manifest.find("\"it's \\\"a\\\" \\\\ sweep.yaml\""), std::string::npos) << manifest;
}

}  // namespace
}  // namespace hostile_outputs
