// Hostile Prometheus rule files: rules Prometheus itself would refuse, a
// Kubernetes document of the wrong kind, and no promtool at all. Each is bad
// input before anything runs: exit 2 at the rule's line and column, no
// results written.
#include <string>

#include "tests/hostile/hostile.hpp"

namespace gauntlet::hostile {
namespace {

bool have_promtool() { return std::system("command -v promtool >/dev/null 2>&1") == 0; }

// `gauntlet run` of the small scenario with `rules` as its prom: detector.
Result run_with_rules(const fs::path& dir, const std::string& rules) {
  const fs::path scenario = write(dir / "s.yaml", small_scenario("  - timeout\n"));
  const fs::path file = write(dir / "rules.yaml", rules);
  return gauntlet("run " + scenario.string() + " --out " + (dir / "out").string() +
                  " --detectors prom:" + file.string());
}

TEST(HostilePromRules, AnUnclosedParenthesisIsBadInputAtTheExpressionBeforeTheRun) {
  if (!have_promtool()) GTEST_SKIP() << "promtool is not installed (Debian: prometheus)";
  const fs::path dir = scratch("prom-paren");
  const Result r = run_with_rules(dir, R"(groups:
  - name: g
    rules:
      - alert: Fine
        expr: DCGM_FI_DEV_XID_ERRORS > 0
      - alert: Unclosed
        expr: rate(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL[5m] > 0
)");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("rules.yaml:7:15: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unclosed left parenthesis"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out")) << "a results folder was written";
}

TEST(HostilePromRules, AForDurationInWordsIsBadInputAtTheDuration) {
  if (!have_promtool()) GTEST_SKIP() << "promtool is not installed (Debian: prometheus)";
  const fs::path dir = scratch("prom-for");
  const Result r = run_with_rules(dir, R"(groups:
  - name: g
    rules:
      - alert: Slow
        expr: DCGM_FI_DEV_SM_CLOCK < 1000
        for: 1 minute
)");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("rules.yaml:6:14: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not a valid duration string"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(HostilePromRules, AnErrorInAPrometheusRuleIsPlacedInTheOriginalFile) {
  if (!have_promtool()) GTEST_SKIP() << "promtool is not installed (Debian: prometheus)";
  const fs::path dir = scratch("prom-k8s-error");
  const Result r = run_with_rules(dir, R"(apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: gpu, namespace: monitoring}
spec:
  groups:
    - name: gpu
      rules:
        - alert: Fine
          expr: DCGM_FI_DEV_XID_ERRORS > 0
        - alert: Broken
          expr: DCGM_FI_DEV_XID_ERRORS >
)");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("rules.yaml:11:17: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\"Broken\""), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(HostilePromRules, AKubernetesDocumentOfAnotherKindGetsAHint) {
  const fs::path dir = scratch("prom-k8s-kind");
  const Result r = run_with_rules(dir, R"(apiVersion: v1
kind: ConfigMap
metadata: {name: rules}
data:
  rules.yaml: |
    groups: []
)");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("rules.yaml:2:7: a Kubernetes 'ConfigMap' document holds no Prometheus rules"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("kind: PrometheusRule"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(HostilePromRules, WithoutPromtoolTheRulesAreBadInputUpFront) {
  const fs::path dir = scratch("prom-no-promtool");
  fs::create_directories(dir / "empty-path");
  const fs::path scenario = write(dir / "s.yaml", small_scenario("  - timeout\n"));
  const fs::path rules = write(dir / "rules.yaml",
                               "groups:\n  - name: g\n    rules:\n      - alert: A\n"
                               "        expr: DCGM_FI_DEV_XID_ERRORS > 0\n");
  const std::string command = "PATH=" + (dir / "empty-path").string() + " " + gauntlet_binary() + " run " +
                              scenario.string() + " --out " + (dir / "out").string() +
                              " --detectors prom:" + rules.string() + " >/dev/null 2>" + (dir / "stderr").string() +
                              " </dev/null";
  const int status = std::system(command.c_str());
  const std::string err = cli_test::slurp(dir / "stderr");
  EXPECT_EQ(WEXITSTATUS(status), 2) << err;
  EXPECT_NE(err.find("rules.yaml: cannot start promtool"), std::string::npos) << err;
  EXPECT_NE(err.find("apt-get install prometheus"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir / "out"));
}

}  // namespace
}  // namespace gauntlet::hostile
