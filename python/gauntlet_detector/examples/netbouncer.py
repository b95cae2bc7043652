"""NetBouncer (Tan et al., NSDI'19): probe paths that cover every link, fit each link's success probability.

NetBouncer probes chosen paths through the Clos fabric and infers per-link
success probabilities x from the paths' success rates y, with a path's
success the product of its links': it minimizes

    sum over paths j of (y_j - prod_{i on j} x_i)^2  +  lam * sum over links i of x_i (1 - x_i),   0 <= x <= 1

by coordinate descent (each x_i in turn has a closed form with the others
held), the regularizer pushing every x towards 0 or 1 so that a few lost
packets do not smear over many links. Links whose fitted x falls below
`bad_below` are reported, worst first.

Here:

- Path selection: every round each RNIC probes an RNIC on another leaf,
  the destinations rotating, with a UDP source port that changes every
  round, so ECMP spreads the trains over every spine and, within a few
  rounds, every host and fabric link is crossed (NetBouncer's IP-in-IP
  bounces off a chosen spine; a source port is this fabric's way to pick
  one, docs/protocol.md).
- A path's y is its pings' success rate over a sliding `window`, pooled
  over the trains that crossed the same links.
- NetBouncer's domain knowledge that a good path has good links is applied
  conservatively: a link crossed only by paths that lost nothing in the
  window is held at 1, and only the links of lossy paths are fitted (with
  every path crossing one of them, lossless ones included).

    exec:python3 -m gauntlet_detector.examples.netbouncer [--round S] [--window S] [--lam L] [--bad-below X]
"""
import argparse
import collections
import sys

from gauntlet_detector import Detector, alert, parameter, run, telemetry

NS_PER_S = 1_000_000_000
MAX_SUSPECTS = 8
FIRST_PORT = 49152  # IANA's dynamic range; any port from 1 works


def path_objective(x, paths):
    """The fit's squared error over paths [(links, y)] for link values x (a dict)."""
    total = 0.0
    for links, y in paths:
        product = 1.0
        for link in links:
            product *= x[link]
        total += (y - product) ** 2
    return total


def fit_links(paths, lam, sweeps=100, tolerance=1e-7):
    """NetBouncer's regularized fit: {link: success probability} for paths [(links, y)].

    Coordinate descent: with the other links held, path j's prediction is
    x_i r_j (r_j the product of the others), and the objective in x_i is
    sum (y_j - x_i r_j)^2 + lam x_i (1 - x_i); its minimum is at
    (sum r_j y_j - lam / 2) / (sum r_j^2 - lam), clamped to [0, 1], when
    that quadratic is convex, else at whichever end is lower.
    """
    through = collections.defaultdict(list)
    for j, (links, _) in enumerate(paths):
        for link in links:
            through[link].append(j)
    # Start each link at the mean success of the paths that cross it.
    x = {link: sum(paths[j][1] for j in js) / len(js) for link, js in through.items()}
    for _ in range(sweeps):
        moved = 0.0
        for link in sorted(through):
            ry = rr = 0.0
            for j in through[link]:
                links, y = paths[j]
                r = 1.0
                for other in links:
                    if other != link:
                        r *= x[other]
                ry += r * y
                rr += r * r
            curvature = rr - lam
            if curvature > 0:
                best = min(1.0, max(0.0, (ry - lam / 2) / curvature))
            else:  # concave in x_i: an end is the minimum; f(1) - f(0) = rr - 2 ry
                best = 1.0 if rr - 2 * ry <= 0 else 0.0
            moved = max(moved, abs(best - x[link]))
            x[link] = best
        if moved < tolerance:
            break
    return x


class NetBouncer(Detector):
    def __init__(self, round_s=2.0, window_s=60.0, lam=0.1, bad_below=0.999, fit_every_s=5.0):
        super().__init__()
        self.round_ns, self.window_ns = int(round_s * NS_PER_S), int(window_s * NS_PER_S)
        self.fit_every_ns = int(fit_every_s * NS_PER_S)
        self.lam, self.bad_below = lam, bad_below
        self.rnics, self.leaf_of = [], {}
        self.rounds, self.next_round_ns, self.next_fit_ns = 0, 0, 0
        self.results = collections.deque()  # (sent_ns, links, pings, pings_lost)
        # The window's totals per distinct path, kept as results enter and
        # leave it: {links: [pings, pings_lost]}.
        self.path_totals = {}
        self.bad = set()

    def parameters(self):
        return [
            parameter("round", "duration", "%gs" % (self.round_ns / NS_PER_S), 0.1, 3600, "time between probe rounds"),
            parameter("window", "duration", "%gs" % (self.window_ns / NS_PER_S), 1, 86400,
                      "probe results this recent are fitted together"),
            parameter("lam", "number", self.lam, 0, 100, "the regularizer's weight, which pushes x to 0 or 1"),
            parameter("bad_below", "number", self.bad_below, 0, 1, "fitted success below which a link is bad"),
        ]

    def configure(self, values):
        self.round_ns, self.window_ns = int(values["round"] * NS_PER_S), int(values["window"] * NS_PER_S)
        self.lam, self.bad_below = values["lam"], values["bad_below"]

    def on_start(self, start):
        self.leaf_of = telemetry.rnic_leaves(start.topology)
        self.rnics = list(self.leaf_of)

    def plan_round(self):
        """One probe per RNIC to an RNIC of another leaf and host, the destination and port rotating."""
        n = len(self.rnics)
        self.rounds += 1
        port = FIRST_PORT + self.rounds % 4096
        for i, src in enumerate(self.rnics):
            for step in range(1, n):
                dst = self.rnics[(i + step + self.rounds * 5) % n]
                if self.leaf_of[dst] != self.leaf_of[src] and dst.split(".")[0] != src.split(".")[0]:
                    self.probe(src, dst, source_port=port)
                    break

    def add_result(self, sent_ns, links, pings, lost):
        self.results.append((sent_ns, links, pings, lost))
        totals = self.path_totals.setdefault(links, [0, 0])
        totals[0] += pings
        totals[1] += lost

    def expire_results(self, before_ns):
        while self.results and self.results[0][0] < before_ns:
            _, links, pings, lost = self.results.popleft()
            totals = self.path_totals[links]
            totals[0] -= pings
            totals[1] -= lost
            if not totals[0]:
                del self.path_totals[links]

    def lossy_paths_links(self):
        """The links of every path that lost a ping in the window."""
        return {link for links, (pings, lost) in self.path_totals.items() if 1.0 - lost / pings < 1.0
                for link in links}

    def paths_crossing(self, links_of_interest):
        """[(links, y)] in path order: each path crossing one of the links, with its ping success."""
        crossing = [(links, totals) for links, totals in self.path_totals.items()
                    if not links_of_interest.isdisjoint(links)]
        crossing.sort(key=lambda pair: pair[0])
        return [(links, 1.0 - lost / pings) for links, (pings, lost) in crossing]

    def judge(self):
        suspects = self.lossy_paths_links()
        if not suspects:
            self.bad = set()
            return []
        relevant = self.paths_crossing(suspects)
        held = {link for links, _ in relevant for link in links} - suspects
        x = fit_links([(tuple(l for l in links if l not in held), y) for links, y in relevant], self.lam)
        bad = {link: value for link, value in x.items() if value < self.bad_below}
        # The fit's noise leaves a little loss on links that share lossy
        # paths with a bad one; a link newly bad raises an alert when its
        # loss is at least half the worst's.
        worst_loss = 1.0 - min(bad.values(), default=1.0)
        fresh = {link for link, value in bad.items() if link not in self.bad and 1.0 - value >= worst_loss / 2}
        # A bad link stays reported while lossy paths cross it: an estimate
        # hovering at the threshold raises one alert, not one per crossing.
        self.bad = (self.bad & suspects) | fresh
        if not fresh:
            return []
        worst = sorted(bad.items(), key=lambda kv: (kv[1], kv[0]))[:MAX_SUSPECTS]
        return [alert("network", *[(link, 1.0 - value) for link, value in worst])]

    def on_batch(self, batch):
        for p in telemetry.records(batch, "probe"):
            links = tuple(c for c in p.path if "~" in c)
            if links and p.pings:
                self.add_result(p.sent_ns, links, p.pings, p.pings_lost)
        self.expire_results(batch.until_ns - self.window_ns)
        if batch.until_ns >= self.next_round_ns and self.rnics:
            self.plan_round()
            self.next_round_ns = batch.until_ns + self.round_ns
        if batch.until_ns < self.next_fit_ns:
            return []
        self.next_fit_ns = batch.until_ns + self.fit_every_ns
        return self.judge()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--round", type=float, default=2.0, help="seconds between probe rounds")
    parser.add_argument("--window", type=float, default=60.0, help="seconds of probe results fitted together")
    parser.add_argument("--lam", type=float, default=0.1, help="the regularizer's weight (pushes x to 0 or 1)")
    parser.add_argument("--bad-below", type=float, default=0.999, help="fitted success below which a link is bad")
    args = parser.parse_args()
    return run(NetBouncer(args.round, args.window, args.lam, args.bad_below))


if __name__ == "__main__":
    sys.exit(main())
