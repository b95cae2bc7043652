"""007's vote and NetBouncer's fit against hand-built flows, probe paths and batches."""
import math
import unittest

from gauntlet_detector import protocol, telemetry_pb2
from gauntlet_detector.examples import netbouncer, vote007

S = 1_000_000_000


def flow(end_s, links, votes=True):
    return vote007.Flow(end_s * S, tuple(links), votes)


class Vote007Tally(unittest.TestCase):
    def test_each_voting_flow_gives_one_over_its_hops(self):
        votes = vote007.tally([flow(1, ["a~l1", "l1~s1", "l2~s1", "b~l2"]), flow(1, ["a~l1", "c~l1"]),
                               flow(1, ["x~l3", "y~l3"], votes=False)])
        self.assertAlmostEqual(votes["a~l1"], 0.25 + 0.5)
        self.assertAlmostEqual(votes["l1~s1"], 0.25)
        self.assertAlmostEqual(votes["c~l1"], 0.5)
        self.assertNotIn("x~l3", votes)

    def test_greedy_search_explains_each_voting_flow_once(self):
        # Three flows cross the bad link l1~s1; one other flow retransmitted elsewhere.
        flows = [flow(1, ["a~l1", "l1~s1", "l2~s1", "b~l2"]), flow(1, ["c~l1", "l1~s1", "l3~s1", "d~l3"]),
                 flow(1, ["e~l1", "l1~s1", "l2~s1", "f~l2"]), flow(1, ["g~l4", "h~l4"])]
        blamed = vote007.blame(flows)
        self.assertEqual([link for link, _ in blamed], ["l1~s1", "g~l4"])
        self.assertAlmostEqual(blamed[0][1], 0.75)
        self.assertAlmostEqual(blamed[1][1], 0.5)  # the flows of l1~s1 no longer vote for l2~s1

    def test_only_flows_resending_more_than_the_share_vote(self):
        detector = vote007.Vote007(window_s=60, min_resend_share=1e-3)
        batch = telemetry_pb2.Batch(until_ns=60 * S)
        for src, resent in (("h0.nic0", 10), ("h1.nic0", 100_000)):
            f = batch.records.add().flow
            f.src, f.end_ns, f.packets, f.retransmitted_packets = src, 60 * S, 50_000_000, resent
            f.path.extend([src + "~leaf0", "leaf0~spine0"])
        (raised,) = detector.on_batch(batch)
        self.assertEqual(raised.suspects[0].id, "h1.nic0~leaf0")  # tied with leaf0~spine0, first by name
        self.assertEqual([s.score for s in raised.suspects], [0.5, 0.5])
        # The same blame again raises nothing; once the records age out of the window, nothing is blamed.
        self.assertEqual(detector.on_batch(batch), [])
        self.assertEqual(detector.on_batch(telemetry_pb2.Batch(until_ns=200 * S)), [])
        self.assertEqual(detector.blamed, set())


class NetBouncerFit(unittest.TestCase):
    # Two leaves under two spines, two RNICs per leaf; every path host-leaf-spine-leaf-host.
    LINKS = {"a~l1": 1.0, "b~l1": 0.9, "c~l2": 1.0, "d~l2": 1.0,
             "l1~s1": 1.0, "l1~s2": 0.8, "l2~s1": 1.0, "l2~s2": 1.0}

    def paths(self):
        out = []
        for src in ("a~l1", "b~l1"):
            for dst in ("c~l2", "d~l2"):
                for spine in ("s1", "s2"):
                    links = (src, "l1~" + spine, "l2~" + spine, dst)
                    out.append((links, math.prod(self.LINKS[l] for l in links)))
        return out

    def test_recovers_link_success_from_exact_path_rates(self):
        x = netbouncer.fit_links(self.paths(), lam=0.0, sweeps=500, tolerance=1e-12)
        # Every link but the two that share all their paths is identifiable here;
        # the paths' products, which is what the fit minimizes over, are all exact.
        for links, y in self.paths():
            self.assertAlmostEqual(math.prod(x[l] for l in links), y, places=6)
        self.assertAlmostEqual(x["l1~s2"] * x["l2~s2"], 0.8, places=4)
        self.assertAlmostEqual(x["b~l1"], 0.9, places=3)

    def test_the_regularizer_holds_a_small_deficit_at_one(self):
        # One path lost one ping of 20 (y 0.95) among 40 clean ones through the same link:
        # the deficit, 0.05, is below lam / 2, so the link stays at 1.
        paths = [(("h~l1",), 0.95)] + [(("h~l1",), 1.0)] * 40
        self.assertEqual(netbouncer.fit_links(paths, lam=0.2)["h~l1"], 1.0)
        self.assertLess(netbouncer.fit_links(paths, lam=0.0)["h~l1"], 1.0)

    def test_a_dark_link_fits_to_zero(self):
        paths = [(("a~l1", "l1~s1"), 0.0), (("b~l1", "l1~s1"), 0.0), (("a~l1", "l1~s2"), 1.0),
                 (("b~l1", "l1~s2"), 1.0)]
        x = netbouncer.fit_links(paths, lam=0.1)
        self.assertEqual(x["l1~s1"], 0.0)
        self.assertEqual(x["a~l1"], 1.0)

    def test_probes_cover_every_link_and_a_lossy_one_is_named(self):
        start = protocol.DetectorStart()
        for link in ("a.nic0~l1", "b.nic0~l1", "c.nic0~l2", "d.nic0~l2"):
            start.topology.links.add(id=link)
        detector = netbouncer.NetBouncer(round_s=2, window_s=60, lam=0.1, bad_below=0.999, fit_every_s=1)
        detector.on_start(start)
        reply = detector.reply_to(telemetry_pb2.Batch(until_ns=S))
        self.assertEqual(sorted(p.src for p in reply.probes), ["a.nic0", "b.nic0", "c.nic0", "d.nic0"])
        self.assertTrue(all(p.dst[0] in ("c", "d") for p in reply.probes if p.src[0] in ("a", "b")))
        batch = telemetry_pb2.Batch(until_ns=3 * S)
        for k, (src, dst, spine, lost) in enumerate([("a", "c", "s1", 0), ("b", "d", "s1", 0), ("a", "d", "s2", 4),
                                                    ("b", "c", "s2", 5), ("c", "a", "s1", 0)]):
            p = batch.records.add().probe
            p.src, p.dst, p.sent_ns, p.pings, p.pings_lost = src + ".nic0", dst + ".nic0", 2 * S, 20, lost
            p.path.extend([src + ".nic0~" + ("l1" if src < "c" else "l2"), "l1~" + spine, "l2~" + spine,
                           dst + ".nic0~" + ("l2" if dst > "b" else "l1")])
        (raised,) = detector.on_batch(batch)
        self.assertIn(raised.suspects[0].id, ("l1~s2", "l2~s2"))  # the spine s2 side: both on every lossy path


if __name__ == "__main__":
    unittest.main()
