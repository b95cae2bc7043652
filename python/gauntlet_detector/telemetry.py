"""Telemetry helpers: steady stretches expanded, counters turned into rates.

A batch carries plain records plus compact forms of what repeats: SteadyRun
(identical iterations), SteadySamples (hardware samples that held still) and
FlowTableRun. These helpers give every iteration and every sample with its
own time, in time order, so a detector can treat them alike.
"""

from collections import namedtuple

NS_PER_S = 1_000_000_000

# One training iteration over all workers that reported it.
#   index, start_ns, end_ns: the iteration's number and its span (earliest
#     start, latest end over its workers)
#   workers: {worker id: IterationRecord} (times are those of this repeat)
#   repeats: 1, or the count of identical iterations a steady stretch stands
#     for when expand=False (index is then the first of them)
Iteration = namedtuple("Iteration", "index start_ns end_ns workers repeats")

# One sample of a hardware counter, per second: NicCounters and
# PortCounters count what happened in the period ending at time_ns.
NicRate = namedtuple("NicRate", "nic time_ns tx_gbps rx_gbps tx_pps rx_pps cnp_per_s link_up")
PortRate = namedtuple("PortRate", "link upward time_ns tx_gbps tx_pps ecn_per_s queue_bytes link_up")


def _shifted(record, shift_ns, index):
    copy = type(record)()
    copy.CopyFrom(record)
    copy.start_ns += shift_ns
    copy.end_ns += shift_ns
    copy.iteration = index
    return copy


def _iteration(index, records, repeats=1):
    return Iteration(index, min(r.start_ns for r in records), max(r.end_ns for r in records),
                     {r.worker: r for r in records}, repeats)


def iterations(batch, expand=True):
    """Every iteration the batch reports, in order of start time.

    Plain IterationRecords are grouped by iteration number. A SteadyRun
    (published in the batch covering its last iteration) stands for
    last - first + 1 identical iterations: with expand=True each comes with
    its own times; with expand=False it comes once, repeats set to its
    length, which keeps month-long runs cheap.
    """
    by_index = {}
    for record in batch.records:
        if record.HasField("iteration"):
            by_index.setdefault(record.iteration.iteration, []).append(record.iteration)
    out = [_iteration(i, records) for i, records in by_index.items()]
    for run in batch.steady:
        first = [r.iteration for r in run.records if r.HasField("iteration")]
        if not first:
            continue
        count = run.last_iteration - run.first_iteration + 1
        if not expand:
            out.append(_iteration(run.first_iteration, first, count))
            continue
        for k in range(count):
            shift = k * run.period_ns
            index = run.first_iteration + k
            out.append(_iteration(index, [_shifted(r, shift, index) for r in first]))
    out.sort(key=lambda it: (it.start_ns, it.index))
    return out


_SAMPLE_FIELDS = ("gpu", "cpu", "nic", "port", "transport")


def samples(batch, kind):
    """(time_ns, sample) for every sample of `kind` (gpu, cpu, nic, port, transport).

    Includes the repeats that SteadySamples blocks stand for: sample s of a
    block recurs at s.time_ns + i * period_ns while from_ns + i * period_ns
    <= until_ns. Repeats share one message object: read it, do not change it.
    Sorted by time; the sample's own time_ns is that of its first taking.
    """
    if kind not in _SAMPLE_FIELDS:
        raise ValueError("kind must be one of %s" % ", ".join(_SAMPLE_FIELDS))
    out = []
    for record in batch.records:
        if record.WhichOneof("body") == kind:
            sample = getattr(record, kind)
            out.append((sample.time_ns, sample))
    for block in batch.steady_samples:
        for record in block.samples:
            if record.WhichOneof("body") != kind:
                continue
            sample = getattr(record, kind)
            repeat = 0
            while block.from_ns + repeat * block.period_ns <= block.until_ns:
                out.append((sample.time_ns + repeat * block.period_ns, sample))
                repeat += 1
    out.sort(key=lambda pair: pair[0])
    return out


def nic_rates(batch, period_ns=NS_PER_S):
    """RNIC counters of each sample period as rates (Gb/s, packets/s, CNPs/s)."""
    per_s = NS_PER_S / period_ns
    return [NicRate(n.nic, t, n.tx_bytes * 8 * per_s / 1e9, n.rx_bytes * 8 * per_s / 1e9, n.tx_packets * per_s,
                    n.rx_packets * per_s, n.cnp * per_s, n.link_up)
            for t, n in samples(batch, "nic")]


def port_rates(batch, period_ns=NS_PER_S):
    """Switch port counters of each sample period as rates (Gb/s, packets/s, ECN marks/s)."""
    per_s = NS_PER_S / period_ns
    return [PortRate(p.link, p.upward, t, p.tx_bytes * 8 * per_s / 1e9, p.tx_packets * per_s,
                     p.ecn_marked * per_s, p.queue_depth, p.link_up)
            for t, p in samples(batch, "port")]


def records(batch, kind):
    """The plain records of one kind (probe, flow, benchmark, profile, job, container, heartbeat, ...)."""
    return [getattr(r, kind) for r in batch.records if r.WhichOneof("body") == kind]


def rnic_leaves(topology):
    """Each RNIC's leaf, by RNIC name, in the topology's order (host links are named h<N>.nic<K>~leaf<L>)."""
    leaves = {}
    for link in topology.links:
        if not link.fabric:
            rnic, leaf = link.id.split("~")
            leaves[rnic] = leaf
    return leaves
