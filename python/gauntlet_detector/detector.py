"""The Detector base class and the loop that speaks the protocol.

Subclass Detector, override on_batch (and on_start if the topology or the
cadence matter), and call run(YourDetector()) from your module's main. Each
batch gets exactly one reply, built from what on_batch returns plus the
probe, profiling and benchmark requests made while it ran.
"""

import re
import sys

from . import framing
from . import detector_protocol_pb2 as protocol
from . import telemetry_pb2 as telemetry

ALERT_KINDS = ("fail_stop", "fail_slow", "network", "monitor")


def alert(kind, *suspects):
    """An Alert: suspects are component ids, or (id, score) pairs, best first."""
    if kind not in ALERT_KINDS:
        raise ValueError("alert kind must be one of %s, got %r" % (", ".join(ALERT_KINDS), kind))
    message = protocol.Alert(kind=kind)
    for suspect in suspects:
        ident, score = (suspect, 1.0) if isinstance(suspect, str) else suspect
        message.suspects.add(id=ident, score=score)
    return message


_KINDS = {"number": protocol.ParameterDeclaration.NUMBER, "integer": protocol.ParameterDeclaration.INTEGER,
          "duration": protocol.ParameterDeclaration.DURATION}
_SECONDS_PER_UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parameter(name, kind, default, minimum=None, maximum=None, help=""):
    """A ParameterDeclaration: kind is number, integer or duration (written 30s, 500ms; bounds in seconds).

    default is written as a scenario would write it (0.1, 5, "30s")."""
    if kind not in _KINDS:
        raise ValueError("parameter kind must be one of %s, got %r" % (", ".join(_KINDS), kind))
    declaration = protocol.ParameterDeclaration(name=name, kind=_KINDS[kind], default_value=str(default), help=help)
    if minimum is not None:
        declaration.min = minimum
    if maximum is not None:
        declaration.max = maximum
    return declaration


def parameter_value(declaration, text):
    """A parameter's text (as a scenario writes it) as a Python number: a duration in seconds."""
    if declaration.kind == protocol.ParameterDeclaration.INTEGER:
        return int(text)
    if declaration.kind == protocol.ParameterDeclaration.DURATION:
        match = re.fullmatch(r"([0-9]*\.?[0-9]+)(ns|us|ms|s|m|h|d)", text)
        if not match:
            raise ValueError("bad duration %r" % text)
        return float(match.group(1)) * _SECONDS_PER_UNIT[match.group(2)]
    return float(text)


class Detector:
    """Override on_start and on_batch; the request methods queue asks for the current reply.

    A detector with parameters a scenario may set (and a threshold sweep may
    sweep) declares them in parameters() and takes their values in
    configure(), which run() calls before on_start.
    """

    def parameters(self):
        """The ParameterDeclarations (see parameter()) gauntlet may set; none by default."""
        return []

    def configure(self, values):
        """Takes {name: value} for every declared parameter (the scenario's or the default), before on_start.

        By default each becomes an attribute of that name."""
        for name, value in values.items():
            setattr(self, name, value)

    def __init__(self):
        self.start = None  # the DetectorStart, once on_start has run
        self._reply = protocol.DetectorReply()

    def on_start(self, start):
        """Called once with the DetectorStart: topology, job, cadence."""

    def on_batch(self, batch):
        """Called with every telemetry Batch; returns the alerts to raise (or None)."""
        return None

    def probe(self, src, dst, overlay=False, source_port=0):
        """Asks for one probe from RNIC src to RNIC dst; its ProbeResult arrives in a later batch.

        source_port (1-65535) picks the UDP source port, and so the spine ECMP hashes the pings to;
        0 keeps the src-dst connection's own port (the path the pair's traffic takes)."""
        self._reply.probes.add(src=src, dst=dst, overlay=overlay, source_port=source_port)

    def profile(self, duration_s, workers=()):
        """Switches function-level profiling on; ProfileSummary records arrive when the window ends."""
        self._reply.profiling.add(duration_ns=int(duration_s * 1e9), workers=list(workers))

    def benchmark(self, kind, targets=()):
        """Runs a gemm or allreduce benchmark (training pauses for it); BenchmarkResult records follow."""
        self._reply.benchmarks.add(kind=kind, targets=list(targets))

    def reply_to(self, batch):
        """The DetectorReply for one batch (run() calls this)."""
        self._reply = protocol.DetectorReply()
        for a in self.on_batch(batch) or ():
            self._reply.alerts.append(a)
        return self._reply


def run(detector, stdin=None, stdout=None):
    """Serves one run: reads the start message and every batch, answers each.

    Returns the process exit status (0 when gauntlet closed the stream).
    Anything printed goes to stderr: stdout carries only replies, so a stray
    print() would break the protocol.
    """
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    sys.stdout = sys.stderr
    start = framing.read_message(stdin, protocol.DetectorStart)
    if start is None:
        return 0
    if start.protocol_version != protocol.VERSION_CURRENT:
        print("this SDK speaks protocol version %d, gauntlet sent %d" % (protocol.VERSION_CURRENT,
                                                                         start.protocol_version), file=sys.stderr)
        return 1
    declared = {d.name: d for d in detector.parameters()}
    if start.describe:  # gauntlet asks only for the parameters: the start-up reply
        framing.write_message(stdout, protocol.DetectorDescription(parameters=list(declared.values())))
        return 0
    values = {name: parameter_value(d, d.default_value) for name, d in declared.items()}
    for given in start.parameters:
        if given.name not in declared:
            print("gauntlet set parameter %r, which this detector does not declare" % given.name, file=sys.stderr)
            return 1
        values[given.name] = parameter_value(declared[given.name], given.value)
    detector.configure(values)
    detector.start = start
    detector.on_start(start)
    while True:
        batch = framing.read_message(stdin, telemetry.Batch)
        if batch is None:
            return 0
        framing.write_message(stdout, detector.reply_to(batch))
