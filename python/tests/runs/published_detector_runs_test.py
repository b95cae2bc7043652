"""007 and NetBouncer (gauntlet_detector.examples.vote007, .netbouncer) on real gauntlet runs.

scenarios/faults/link-loss.yaml shortened to 8 minutes, 2% loss from 2 to 6
minutes: on a host link, which the ring's connections into and out of the
RNIC both cross, 007's votes name it first; on the fabric link leaf3~spine2,
which only one connection of the job crosses, the four links of that
connection's path tie on votes (007 needs several flows through a link, as
its paper says), while NetBouncer's probes, spread over every spine, name
it. With the fault taken out both stay quiet on the realistic fleet's
background corruption (below 1e-5, CorrOpt).

    python3 published_detector_runs_test.py --gauntlet build/gauntlet --source-dir .
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

from run_paths import PATHS, main


def detector_entry(module, short, flow_records=False):
    command = "exec:%s -m gauntlet_detector.examples.%s" % (sys.executable, module)
    extra = ", flow_records: true" if flow_records else ""
    return "{name: %s, as: %s%s}" % (json.dumps(command), short, extra)


VOTE007 = detector_entry("vote007", "vote007", flow_records=True)
NETBOUNCER = detector_entry("netbouncer", "netbouncer")


def scenario_text(fault):
    with open(os.path.join(PATHS["source"], "scenarios", "faults", "link-loss.yaml")) as f:
        text = f.read()
    for old, new in (("duration: 40m", "duration: 8m"),
                     ("  - {type: link_loss, target: leaf3~spine2, at: 10m, duration: 15m, rate: 0.02}", fault)):
        if old not in text:
            raise AssertionError("no %r in scenarios/faults/link-loss.yaml" % old)
        text = text.replace(old, new)
    return text


def run(test, fault):
    """summary.json's detectors after one gauntlet run of the shortened scenario with both detectors."""
    folder = tempfile.mkdtemp(prefix="published-detectors-")
    scenario = os.path.join(folder, "scenario.yaml")
    with open(scenario, "w") as f:
        f.write(scenario_text(fault))
    command = [PATHS["gauntlet"], "run", scenario, "--out", os.path.join(folder, "out"), "--no-progress",
               "--detector", VOTE007, "--detector", NETBOUNCER]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    test.assertEqual(done.returncode, 0, done.stderr)
    with open(os.path.join(folder, "out", "summary.json")) as f:
        detectors = json.load(f)["detectors"]
    for name in ("vote007", "netbouncer"):
        test.assertEqual(detectors[name]["status"], "ok", done.stderr)
    return detectors


class PublishedLocalizers(unittest.TestCase):
    def test_both_name_a_lossy_host_link(self):
        d = run(self, "  - {type: link_loss, target: h0.nic3~leaf3, at: 2m, duration: 4m, rate: 0.02}")
        for name in ("vote007", "netbouncer"):
            self.assertEqual(d[name]["detected"], 1, name)
            self.assertEqual(d[name]["localization_top1"], 1.0, name)
            self.assertEqual(d[name]["false_alerts"], 0, name)
        # 007 waits for the flow records: the active timeout (1 min) after the fault's start at most.
        self.assertLessEqual(d["vote007"]["detection_latency_s"]["p50"], 65.0)
        self.assertGreater(d["netbouncer"]["probes_sent"], 0)

    def test_netbouncer_names_a_fabric_link_that_007_cannot_single_out(self):
        d = run(self, "  - {type: link_loss, target: leaf3~spine2, at: 2m, duration: 4m, rate: 0.02}")
        self.assertEqual(d["netbouncer"]["detected"], 1)
        self.assertEqual(d["netbouncer"]["localization_top1"], 1.0)
        self.assertEqual(d["netbouncer"]["false_alerts"], 0)
        self.assertEqual(d["vote007"]["detected"], 1)
        self.assertEqual(d["vote007"]["localization_top1"], 0.25)  # tied with the 3 other links of one flow
        self.assertEqual(d["vote007"]["localization_top3"], 0.75)

    def test_both_stay_quiet_on_a_healthy_run(self):
        d = run(self, "  []")
        for name in ("vote007", "netbouncer"):
            self.assertEqual(d[name]["alerts"], 0, name)


if __name__ == "__main__":
    main(__doc__)
