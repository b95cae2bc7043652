"""Write gauntlet detectors in Python.

    from gauntlet_detector import Detector, alert, run, telemetry

The protocol (docs/protocol.md) in a few lines: gauntlet starts the detector
as `exec:COMMAND`, sends one DetectorStart and then one telemetry Batch per
simulated second on stdin, and waits for one DetectorReply per batch on
stdout. The message classes are generated from sim/proto/*.proto when
gauntlet is built (detector_protocol_pb2, telemetry_pb2 in this package).
"""

from .protobuf_path import ensure_protobuf

ensure_protobuf()  # before the message classes: another python3 may lack protobuf

from . import detector_protocol_pb2 as protocol  # noqa: E402
from . import telemetry_pb2  # noqa: E402
from . import telemetry  # noqa: E402
from .detector import ALERT_KINDS, Detector, alert, parameter, run  # noqa: E402
from .framing import ProtocolError, read_message, write_message  # noqa: E402

__all__ = ["ALERT_KINDS", "Detector", "ProtocolError", "alert", "parameter", "protocol", "read_message", "run",
           "telemetry", "telemetry_pb2", "write_message"]
