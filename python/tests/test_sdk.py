"""The SDK against hand-built messages: framing, steady stretches, rates, the reply loop."""
import io
import sys
import unittest

from gauntlet_detector import Detector, alert, framing, parameter, protocol, run, telemetry, telemetry_pb2

S = 1_000_000_000


def iteration_record(batch_or_run, worker, index, start, end, compute):
    r = batch_or_run.records.add().iteration
    r.worker, r.iteration, r.start_ns, r.end_ns, r.compute_ns = worker, index, start, end, compute


class Framing(unittest.TestCase):
    def test_round_trip_of_several_messages(self):
        stream = io.BytesIO()
        batches = [telemetry_pb2.Batch(until_ns=k * S) for k in (1, 2, 300)]
        for b in batches:
            framing.write_message(stream, b)
        stream.seek(0)
        read = [framing.read_message(stream, telemetry_pb2.Batch) for _ in batches]
        self.assertEqual([b.until_ns for b in read], [S, 2 * S, 300 * S])
        self.assertIsNone(framing.read_message(stream, telemetry_pb2.Batch))

    def test_long_varint(self):
        self.assertEqual(framing.encode_varint(300), b"\xac\x02")

    def test_cut_frame_is_an_error(self):
        stream = io.BytesIO(framing.encode_varint(10) + b"abc")
        with self.assertRaises(framing.ProtocolError):
            framing.read_frame(stream)


class SteadyStretches(unittest.TestCase):
    def test_steady_run_expands_to_shifted_iterations(self):
        batch = telemetry_pb2.Batch(until_ns=100 * S)
        iteration_record(batch, "h0.gpu0", 4, 0, 2 * S, S)
        run_ = batch.steady.add(first_iteration=5, last_iteration=7, period_ns=3 * S)
        iteration_record(run_, "h0.gpu0", 5, 10 * S, 12 * S, S)
        iteration_record(run_, "h0.gpu1", 5, 10 * S, 12 * S + 5, S)
        its = telemetry.iterations(batch)
        self.assertEqual([it.index for it in its], [4, 5, 6, 7])
        self.assertEqual(its[3].start_ns, 16 * S)
        self.assertEqual(its[3].end_ns, 18 * S + 5)
        self.assertEqual(its[3].workers["h0.gpu1"].iteration, 7)
        compact = telemetry.iterations(batch, expand=False)
        self.assertEqual([(it.index, it.repeats) for it in compact], [(4, 1), (5, 3)])

    def test_steady_samples_repeat_until_the_block_ends(self):
        batch = telemetry_pb2.Batch(until_ns=10 * S)
        batch.records.add().gpu.CopyFrom(telemetry_pb2.GpuSample(gpu="h0.gpu0", time_ns=S, clock_mhz=1400))
        block = batch.steady_samples.add(from_ns=2 * S, until_ns=5 * S, period_ns=S)
        block.samples.add().gpu.CopyFrom(telemetry_pb2.GpuSample(gpu="h0.gpu0", time_ns=2 * S, clock_mhz=1400))
        times = [t for t, _ in telemetry.samples(batch, "gpu")]
        self.assertEqual(times, [S, 2 * S, 3 * S, 4 * S, 5 * S])

    def test_nic_counters_become_rates(self):
        batch = telemetry_pb2.Batch(until_ns=S)
        n = batch.records.add().nic
        n.nic, n.time_ns, n.tx_bytes, n.rx_bytes, n.cnp, n.link_up = "h1.nic0", S, 50_000_000_000, 0, 12, True
        (rate,) = telemetry.nic_rates(batch)
        self.assertAlmostEqual(rate.tx_gbps, 400.0)
        self.assertEqual(rate.cnp_per_s, 12)
        (half,) = telemetry.nic_rates(batch, period_ns=2 * S)
        self.assertAlmostEqual(half.tx_gbps, 200.0)


class Loop(unittest.TestCase):
    class Echo(Detector):
        def on_start(self, start):
            self.hosts = start.topology.hosts

        def on_batch(self, batch):
            print("diagnostics must not reach the replies")
            self.probe("h0.nic0", "h1.nic0")
            return [alert("fail_slow", ("h0.gpu1", 0.5), "h0.gpu2")] if batch.until_ns == 2 * S else []

    def test_one_reply_per_batch_with_alerts_and_requests(self):
        stdin = io.BytesIO()
        framing.write_message(stdin, protocol.DetectorStart(protocol_version=protocol.VERSION_CURRENT,
                                                            topology=protocol.Topology(hosts=2)))
        for k in (1, 2):
            framing.write_message(stdin, telemetry_pb2.Batch(until_ns=k * S))
        stdin.seek(0)
        stdout, saved = io.BytesIO(), sys.stdout
        sys.stderr, err = io.StringIO(), sys.stderr
        detector = self.Echo()
        try:
            self.assertEqual(run(detector, stdin, stdout), 0)
        finally:
            sys.stdout, sys.stderr = saved, err
        self.assertEqual(detector.hosts, 2)
        stdout.seek(0)
        first = framing.read_message(stdout, protocol.DetectorReply)
        second = framing.read_message(stdout, protocol.DetectorReply)
        self.assertIsNone(framing.read_message(stdout, protocol.DetectorReply))
        self.assertEqual(len(first.alerts), 0)
        self.assertEqual(len(first.probes), 1)
        self.assertEqual([(s.id, s.score) for s in second.alerts[0].suspects], [("h0.gpu1", 0.5), ("h0.gpu2", 1.0)])

    def test_another_protocol_version_is_refused(self):
        stdin = io.BytesIO()
        framing.write_message(stdin, protocol.DetectorStart(protocol_version=1))
        stdin.seek(0)
        saved_out, saved_err = sys.stdout, sys.stderr
        sys.stderr = io.StringIO()
        try:
            self.assertEqual(run(Detector(), stdin, io.BytesIO()), 1)
        finally:
            sys.stdout, sys.stderr = saved_out, saved_err

    class Tunable(Detector):
        def parameters(self):
            return [parameter("ratio", "number", 1.1, 1, 10, "iteration time over the median"),
                    parameter("window", "duration", "30s", 1, 3600), parameter("persist", "integer", 2, 1)]

    def serve(self, detector, start, batches=()):
        stdin = io.BytesIO()
        framing.write_message(stdin, start)
        for b in batches:
            framing.write_message(stdin, b)
        stdin.seek(0)
        stdout, saved_out, saved_err = io.BytesIO(), sys.stdout, sys.stderr
        sys.stderr = io.StringIO()
        try:
            status = run(detector, stdin, stdout)
        finally:
            sys.stdout, sys.stderr = saved_out, saved_err
        stdout.seek(0)
        return status, stdout

    def test_a_describe_start_gets_the_declared_parameters_and_no_batch(self):
        status, stdout = self.serve(self.Tunable(), protocol.DetectorStart(
            protocol_version=protocol.VERSION_CURRENT, describe=True), [telemetry_pb2.Batch(until_ns=S)])
        self.assertEqual(status, 0)
        description = framing.read_message(stdout, protocol.DetectorDescription)
        self.assertIsNone(framing.read_message(stdout, protocol.DetectorReply))
        ratio, window, persist = description.parameters
        self.assertEqual((ratio.name, ratio.kind, ratio.default_value, ratio.min, ratio.max),
                         ("ratio", protocol.ParameterDeclaration.NUMBER, "1.1", 1, 10))
        self.assertEqual((window.kind, window.default_value), (protocol.ParameterDeclaration.DURATION, "30s"))
        self.assertTrue(persist.HasField("min"))
        self.assertFalse(persist.HasField("max"))

    def test_values_from_the_start_message_reach_the_detector(self):
        start = protocol.DetectorStart(protocol_version=protocol.VERSION_CURRENT)
        start.parameters.add(name="window", value="2m")
        start.parameters.add(name="persist", value="5")
        detector = self.Tunable()
        status, _ = self.serve(detector, start)
        self.assertEqual(status, 0)
        self.assertEqual((detector.ratio, detector.window, detector.persist), (1.1, 120.0, 5))

    def test_an_undeclared_value_stops_the_detector(self):
        start = protocol.DetectorStart(protocol_version=protocol.VERSION_CURRENT)
        start.parameters.add(name="ratoi", value="2")
        self.assertEqual(self.serve(self.Tunable(), start)[0], 1)

    def test_unknown_alert_kind_is_refused(self):
        with self.assertRaises(ValueError):
            alert("slow")


if __name__ == "__main__":
    unittest.main()
