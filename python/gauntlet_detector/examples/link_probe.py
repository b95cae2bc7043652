"""Probes the underlay between RNICs and blames the link whose probes are lost (or slow) most.

Every round each RNIC probes one RNIC on another leaf, a different one each
round, so every fabric link is crossed within a few rounds. A ProbeResult
lists the links it crossed; over a sliding window each link gets the loss
count of lost probes that crossed it and the median round-trip time of the
others. A lost probe's path is shared by several links; the one that
explains the most losses, at least `min_lost` and more than any other,
is a network alert, the others that lost probes crossed ranked after it by
their share of the losses. A link whose median RTT exceeds `rtt_ratio`
times the cluster's median is one too.

    exec:python3 -m gauntlet_detector.examples.link_probe [--round S] [--window S]
"""
import argparse
import collections
import statistics
import sys

from gauntlet_detector import Detector, alert, run, telemetry

NS_PER_S = 1_000_000_000


class LinkProbe(Detector):
    def __init__(self, round_s=2.0, window_s=30.0, min_lost=3, rtt_ratio=3.0, quiet_s=300.0):
        super().__init__()
        self.round_ns, self.window_ns = int(round_s * NS_PER_S), int(window_s * NS_PER_S)
        self.min_lost, self.rtt_ratio, self.quiet_ns = min_lost, rtt_ratio, int(quiet_s * NS_PER_S)
        self.rnics, self.leaf_of, self.rounds, self.next_round_ns = [], {}, 0, 0
        self.results = collections.deque()  # (sent_ns, lost, rtt_ns, links)
        self.last_alert_ns = {}

    def on_start(self, start):
        self.leaf_of = telemetry.rnic_leaves(start.topology)
        self.rnics = list(self.leaf_of)

    def plan_round(self):
        n = len(self.rnics)
        self.rounds += 1
        for i, src in enumerate(self.rnics):
            for step in range(n - 1):
                dst = self.rnics[(i + 1 + (self.rounds * 7 + step) % (n - 1)) % n]
                if self.leaf_of[dst] != self.leaf_of[src] and dst.split(".")[0] != src.split(".")[0]:
                    self.probe(src, dst)
                    break

    def on_batch(self, batch):
        for p in telemetry.records(batch, "probe"):
            links = [c for c in p.path if "~" in c]
            self.results.append((p.sent_ns, p.lost, p.rtt_ns, links))
        while self.results and self.results[0][0] < batch.until_ns - self.window_ns:
            self.results.popleft()
        if batch.until_ns >= self.next_round_ns and self.rnics:
            self.plan_round()
            self.next_round_ns = batch.until_ns + self.round_ns
        return self.judge(batch.until_ns)

    def judge(self, now_ns):
        sent, lost, rtts = collections.Counter(), collections.Counter(), collections.defaultdict(list)
        for _, was_lost, rtt_ns, links in self.results:
            for link in links:
                sent[link] += 1
                if was_lost:
                    lost[link] += 1
                else:
                    rtts[link].append(rtt_ns)
        total_lost = sum(1 for _, was_lost, _, _ in self.results if was_lost)
        ranked = sorted(((lost[l], lost[l] / sent[l], l) for l in lost), reverse=True)
        clear = ranked and ranked[0][0] >= self.min_lost and (len(ranked) == 1 or ranked[0][0] > ranked[1][0])
        suspects = [(count / total_lost, l) for count, _, l in ranked] if clear else []
        kind = "loss"
        if not suspects and rtts:
            typical = statistics.median(r for values in rtts.values() for r in values)
            ratios = ((statistics.median(v) / typical, l) for l, v in rtts.items() if len(v) >= 5 and typical > 0)
            suspects, kind = sorted(((r, l) for r, l in ratios if r > self.rtt_ratio), reverse=True), "rtt"
        if not suspects or now_ns - self.last_alert_ns.get(kind, -self.quiet_ns) < self.quiet_ns:
            return []
        self.last_alert_ns[kind] = now_ns
        return [alert("network", *[(link, score) for score, link in suspects[:8]])]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--round", type=float, default=2.0, help="seconds between probe rounds")
    parser.add_argument("--window", type=float, default=30.0, help="seconds of probe results judged together")
    parser.add_argument("--min-lost", type=int, default=3, help="lost probes a link needs to be blamed")
    args = parser.parse_args()
    return run(LinkProbe(args.round, args.window, args.min_lost))


if __name__ == "__main__":
    sys.exit(main())
