"""007 (Arzani et al., NSDI'18): flows that retransmitted vote for the links of their paths.

007 runs on every host: when a connection retransmits, it traceroutes the
connection's 5-tuple and each of the h links on that path gets a vote of
1/h; links are ranked by their votes, and the most voted link is blamed
first. Its problematic-link search is greedy: the top link is blamed, the
flows that crossed it are taken as explained and their votes withdrawn,
and the votes are counted again until no unexplained flow is left.

Here the connections are the job's RoCE connections, read from the flow
records (`flow_records: true`), which carry the traceroute's links. Two
things differ from the paper, and are parameters:

- A RoCE connection moves tens of millions of packets a minute, so the
  fleet's background corruption (below 1e-5, CorrOpt) makes almost every
  connection resend a few packets; a connection votes only when its
  resends exceed `min_resend_share` of its packets over the record (007's
  TCP flows vote on any retransmission).
- Votes count over a sliding `window` of records, and an alert is raised
  when the greedy search blames a link it did not blame before.

Suspects' scores are their votes: links tied on votes share their places.

    exec:python3 -m gauntlet_detector.examples.vote007 [--window S] [--min-resend-share R]
"""
import argparse
import collections
import sys

from gauntlet_detector import Detector, alert, parameter, run, telemetry

NS_PER_S = 1_000_000_000
MAX_SUSPECTS = 8

# One flow record, as far as voting goes: when it ended, its links, and
# whether it retransmitted enough to vote.
Flow = collections.namedtuple("Flow", "end_ns links votes")


def tally(flows):
    """Each voting flow's 1/h to each of its h links."""
    votes = collections.defaultdict(float)
    for flow in flows:
        if flow.votes:
            for link in flow.links:
                votes[link] += 1.0 / len(flow.links)
    return votes


def blame(flows):
    """007's greedy search: [(link, votes)] in the order blamed, until every voting flow is explained.

    The votes given are those the link had when it was blamed; ties go to
    the link named first, alphabetically, so the result is deterministic.
    """
    left = [f for f in flows if f.votes and f.links]
    blamed = []
    while left:
        votes = tally(left)
        link, top = min(votes.items(), key=lambda kv: (-kv[1], kv[0]))
        blamed.append((link, top))
        left = [f for f in left if link not in f.links]
    return blamed


class Vote007(Detector):
    def __init__(self, window_s=120.0, min_resend_share=1e-3):
        super().__init__()
        self.window_ns = int(window_s * NS_PER_S)
        self.min_resend_share = min_resend_share
        self.flows = collections.deque()
        self.blamed = set()

    def parameters(self):
        return [
            parameter("window", "duration", "%gs" % (self.window_ns / NS_PER_S), 1, 86400,
                      "flow records that ended this recently vote"),
            parameter("min_resend_share", "number", self.min_resend_share, 0, 1000,
                      "resent packets over packets above which a flow votes"),
        ]

    def configure(self, values):
        self.window_ns, self.min_resend_share = int(values["window"] * NS_PER_S), values["min_resend_share"]

    def add(self, record):
        links = tuple(link for link in record.path if "~" in link)
        share = record.retransmitted_packets / record.packets if record.packets else 0.0
        self.flows.append(Flow(record.end_ns, links, share > self.min_resend_share))

    def on_batch(self, batch):
        records = telemetry.records(batch, "flow")
        for record in records:
            self.add(record)
        expired = 0
        while self.flows and self.flows[0].end_ns < batch.until_ns - self.window_ns:
            self.flows.popleft()
            expired += 1
        if not records and not expired:
            return []
        ranked = blame(self.flows)
        now = {link for link, _ in ranked}
        fresh = now - self.blamed
        self.blamed = now
        if not fresh:
            return []
        # 007 ranks links by their votes; the alert lists the most voted.
        votes = tally(self.flows)
        order = sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_SUSPECTS]
        return [alert("network", *[(link, v) for link, v in order])]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=float, default=120.0, help="seconds a flow record's vote lasts")
    parser.add_argument("--min-resend-share", type=float, default=1e-3,
                        help="resent packets over packets above which a flow votes")
    args = parser.parse_args()
    return run(Vote007(args.window, args.min_resend_share))


if __name__ == "__main__":
    sys.exit(main())
