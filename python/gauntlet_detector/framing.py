"""Length-delimited protobuf framing: a varint byte count, then the message.

This is protobuf's own delimited format (what C++'s
SerializeDelimitedToZeroCopyStream and Java's writeDelimitedTo produce), the
only thing that travels on a detector's stdin and stdout.
"""

MAX_FRAME_BYTES = 1 << 30


class ProtocolError(Exception):
    """The stream does not hold well-formed frames."""


def _read_varint(stream):
    value = 0
    for shift in range(0, 64, 7):
        byte = stream.read(1)
        if not byte:
            if shift == 0:
                return None  # a clean end between frames
            raise ProtocolError("stream ended inside a length prefix")
        value |= (byte[0] & 0x7F) << shift
        if not byte[0] & 0x80:
            return value
    raise ProtocolError("length prefix longer than 64 bits")


def read_frame(stream):
    """The next frame's bytes from a binary stream, or None at its end."""
    length = _read_varint(stream)
    if length is None:
        return None
    if length > MAX_FRAME_BYTES:
        raise ProtocolError("frame of %d bytes is over the limit" % length)
    chunks, left = [], length
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise ProtocolError("stream ended %d bytes into a %d-byte frame" % (length - left, length))
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_message(stream, message_class):
    """The next message of message_class, or None at the stream's end."""
    frame = read_frame(stream)
    if frame is None:
        return None
    message = message_class()
    message.ParseFromString(frame)
    return message


def encode_varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def write_message(stream, message):
    """Writes one delimited message and flushes, so the reader sees it now."""
    body = message.SerializeToString()
    stream.write(encode_varint(len(body)) + body)
    stream.flush()
