"""exec: detectors that declare their parameters: scenarios set them, threshold sweeps sweep them.

gauntlet_detector.examples.netbouncer declares bad_below (0 to 1, 0.999 by
default): the fitted link success below which a link is named. A 2% lossy
fabric link fits at about 0.96-0.99, so it is named at 0.999 and 0.99 and
missed at 0.5: the value a scenario or a sweep gives must reach the
detector for that to show.

    python3 declared_parameters_test.py --gauntlet build/gauntlet --source-dir .
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

from run_paths import PATHS, main

COMMAND = "exec:%s -m gauntlet_detector.examples.netbouncer" % sys.executable

SUITE = """name: declared-parameters
version: 1
seed: 3
duration: 6m
detectors:
  - {name: %(command)s, as: netbouncer}
shapes:
  - name: pod16
    cluster: {spines: 2, leaves: 4, hosts: 4, gpus_per_host: 4, rnics_per_host: 4, rail_optimized: true,
              host_link_gbps: 400, fabric_link_gbps: 400, link_latency: 1us}
    job: {name: llm, gpus: 16, parallelism: {tp: 4, pp: 1, dp: 4, ep: 1}, compute_per_iteration: 2s,
          gradient_bytes: 1GB, checkpoint_interval: 5m, restart_cost: 1m}
faults:
  - type: link_loss
    episodes: 1
    target: "leaf*~spine*"
    onset: 1m
    duration: 4m
    rate: 0.02
healthy: {episodes: 1}
sensitivity:
  - {detector: netbouncer, param: bad_below, values: [%(values)s]}
"""


def gauntlet(*args):
    return subprocess.run([PATHS["gauntlet"], *args], capture_output=True, text=True, timeout=900)


def write(folder, name, text):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(text)
    return path


class DeclaredParameters(unittest.TestCase):
    def test_a_threshold_sweep_sweeps_what_the_detector_declares(self):
        folder = tempfile.mkdtemp(prefix="declared-parameters-")
        suite = write(folder, "suite.yaml", SUITE % {"command": json.dumps(COMMAND), "values": "0.5, 0.99"})
        done = gauntlet("suite", suite, "--out", os.path.join(folder, "out"), "--no-progress")
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(os.path.join(folder, "out", "summary.json")) as f:
            (sweep,) = json.load(f)["sensitivity"]
        self.assertEqual((sweep["detector"], sweep["param"]), ("netbouncer", "bad_below"))
        detected = {float(point["value"]): (point["detected"], point["own"]) for point in sweep["points"]}
        self.assertEqual(detected, {0.5: (0, False), 0.99: (1, False), 0.999: (1, True)})

    def test_a_swept_value_outside_the_declared_range_is_bad_input(self):
        folder = tempfile.mkdtemp(prefix="declared-parameters-")
        suite = write(folder, "suite.yaml", SUITE % {"command": json.dumps(COMMAND), "values": "0.5, 2"})
        done = gauntlet("suite", suite, "--out", os.path.join(folder, "out"), "--no-progress")
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn(suite + ":22:", done.stderr)
        self.assertIn("'bad_below' must be at most 1, got 2", done.stderr)
        self.assertFalse(os.path.exists(os.path.join(folder, "out")))

    def scenario(self, folder, entry):
        with open(os.path.join(PATHS["source"], "scenarios", "faults", "link-loss.yaml")) as f:
            text = f.read()
        text = text.replace("duration: 40m", "duration: 8m").replace("at: 10m, duration: 15m", "at: 2m, duration: 4m")
        text = text.replace("detectors: [timeout, falcon, c4d, eroica, skeleton, pingmesh]", "detectors:\n  - " + entry)
        return write(folder, "scenario.yaml", text)

    def test_a_scenario_sets_a_declared_parameter(self):
        folder = tempfile.mkdtemp(prefix="declared-parameters-")
        found = {}
        for value in ("0.5", "0.999"):
            entry = "{name: %s, as: netbouncer, bad_below: %s}" % (json.dumps(COMMAND), value)
            out = os.path.join(folder, "out-" + value)
            done = gauntlet("run", self.scenario(folder, entry), "--out", out, "--no-progress")
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(os.path.join(out, "summary.json")) as f:
                found[value] = json.load(f)["detectors"]["netbouncer"]["detected"]
        self.assertEqual(found, {"0.5": 0, "0.999": 1})

    def test_an_undeclared_parameter_is_bad_input_at_its_key(self):
        folder = tempfile.mkdtemp(prefix="declared-parameters-")
        scenario = self.scenario(folder, "{name: %s, bad_belo: 0.5}" % json.dumps(COMMAND))
        done = gauntlet("validate", scenario)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn(scenario + ":31:", done.stderr)
        self.assertIn("unknown parameter 'bad_belo'", done.stderr)
        self.assertIn("(known: round, window, lam, bad_below)", done.stderr)


if __name__ == "__main__":
    main(__doc__)
