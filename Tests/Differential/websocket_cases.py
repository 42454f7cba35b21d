"""Server byte streams for the WebSocket frame differential, and the reference reading with `websockets`.

The gateway reads frames as a client (RFC 6455 §5.2): `WebSocketFrameParser` with a 4096-byte
payload limit, no extension negotiated. The reference is `websockets.frames.Frame.parse` over a
`websockets.streams.StreamReader` holding the whole input (end of stream fed), with `mask=False` (a
client reads unmasked frames), `max_size=4096` and no extensions, called until the stream is used up.
Both read single frames only; fragment reassembly and message limits are the client state
machine's and are not compared here. The comparison is frame by frame (FIN, opcode, payload) and
then how the stream ended: every byte read, an incomplete frame, or the close code an error calls for.
"""

import random
import struct

from websockets.exceptions import PayloadTooBig, ProtocolError
from websockets.frames import Frame
from websockets.streams import StreamReader

LIMIT = 4096
VALID_OPCODES = [0x0, 0x1, 0x2, 0x8, 0x9, 0xA]
LENGTHS = [0, 1, 2, 5, 17, 100, 125, 126, 127, 128, 200, 1000, 4095, 4096, 4097, 65535, 65536, 2**32, 2**63 - 1,
           2**63, 2**64 - 1]


def header(fin: bool, rsv: int, opcode: int, masked: bool, length: int, form: str) -> bytes:
    first = (0x80 if fin else 0) | rsv << 4 | opcode
    mask_bit = 0x80 if masked else 0
    if form == "short":
        return bytes([first, mask_bit | length])
    if form == "16":
        return bytes([first, mask_bit | 126]) + struct.pack(">H", length)
    return bytes([first, mask_bit | 127]) + struct.pack(">Q", length)


def frame(rng: random.Random) -> bytes:
    valid = rng.random() < 0.7
    opcode = rng.choice(VALID_OPCODES) if valid or rng.random() < 0.6 else rng.randrange(16)
    control = opcode & 0x8 != 0
    fin = True if control and valid else rng.random() < 0.75
    rsv = 0 if valid or rng.random() < 0.6 else rng.randrange(1, 8)
    masked = not valid and rng.random() < 0.15
    if valid:
        length = rng.choice([0, 1, 5, 17, 100, 125] if control else [0, 1, 5, 17, 100, 125, 126, 127, 200, 1000, 4095, 4096])
    else:
        length = rng.choice(LENGTHS)
    shortest = "short" if length < 126 else "16" if length < 65536 else "64"
    form = shortest
    if not valid and rng.random() < 0.3:
        form = rng.choice(["64"] + (["16"] if length < 65536 else []) + (["short"] if length < 126 else []))
    payload_length = min(length, LIMIT + 8)
    data = header(fin, rsv, opcode, masked, length, form)
    if masked:
        data += bytes(rng.randrange(256) for _ in range(4))
    return data + rng.randbytes(payload_length)


def generate(rng: random.Random) -> bytes:
    data = b"".join(frame(rng) for _ in range(rng.choice([1, 1, 2, 3])))
    if rng.random() < 0.15:
        data = data[:rng.randrange(len(data) + 1)]
    elif rng.random() < 0.05:
        position = rng.randrange(len(data))
        data = data[:position] + bytes([rng.randrange(256)]) + data[position + 1:]
    return data


def reference(data: bytes):
    """The frames websockets reads as (fin, opcode, payload) and how the stream ends."""
    reader = StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    frames = []
    while reader.buffer:
        parser = Frame.parse(reader.read_exact, mask=False, max_size=LIMIT, extensions=None)
        try:
            next(parser)
            raise AssertionError("the parser waited for data after the end of the stream")
        except StopIteration as stop:
            parsed = stop.value
            frames.append((parsed.fin, int(parsed.opcode), bytes(parsed.data)))
        except EOFError:
            return frames, "incomplete"
        except PayloadTooBig:
            return frames, "message_too_big"
        except ProtocolError:
            return frames, "protocol_error"
    return frames, "complete"


def broken_rule(data: bytes, offset: int) -> str:
    """The first RFC 6455 rule a client applies (§5.2, §5.1, §5.5, then the size limit) that the frame
    header at `offset` breaks, as far as its bytes go; "no rule" when none."""
    head = data[offset:offset + 10]
    if len(head) < 2:
        return "no rule"
    first, second = head[0], head[1]
    opcode = first & 0x0F
    if first & 0x70:
        return "reserved bits"
    if opcode not in VALID_OPCODES:
        return "reserved opcode"
    if second & 0x80:
        return "masked"
    length = second & 0x7F
    if length == 126 and len(head) >= 4:
        length = struct.unpack(">H", head[2:4])[0]
        if length < 126:
            return "16-bit length under 126"
    elif length == 127 and len(head) >= 10:
        length = struct.unpack(">Q", head[2:10])[0]
        if length >> 63:
            return "64-bit length with the top bit set"
        if length < 65536:
            return "64-bit length under 65536"
    elif length >= 126:
        return "no rule"
    if opcode & 0x8 and not first & 0x80:
        return "fragmented control frame"
    if opcode & 0x8 and length > 125:
        return "control frame over 125 bytes"
    if length > LIMIT:
        return "over the limit"
    return "no rule"


def encoded_size(payload_length: int) -> int:
    """The size of a frame the gateway read: it accepts only shortest lengths and no masking key."""
    return 2 + (0 if payload_length < 126 else 2 if payload_length < 65536 else 8) + payload_length


def accepted(gateway_line: dict) -> bool:
    """Every byte read into frames."""
    return gateway_line["end"] == "complete"


def judge(data: bytes, gateway_line: dict):
    expected_frames, expected_end = reference(data)
    frames = [(fin, opcode, bytes.fromhex(payload)) for fin, opcode, payload in gateway_line["frames"]]
    end = gateway_line["end"]
    common = min(len(frames), len(expected_frames))
    if frames[:common] != expected_frames[:common]:
        return "gateway reads a frame differently from websockets", True
    if len(frames) > len(expected_frames):
        return f"gateway reads a frame websockets ends with {expected_end}", True
    if len(frames) == len(expected_frames) and end == expected_end:
        return None
    # The gateway stopped where websockets read on or ended otherwise: only its refusing a frame can be
    # explained, by the rule the frame's header breaks.
    refused = end in ("protocol_error", "message_too_big")
    rule = broken_rule(data, sum(encoded_size(len(payload)) for _, _, payload in frames))
    if len(frames) < len(expected_frames):
        return f"gateway {end} ({rule}); websockets reads the frame", not refused
    if expected_end == "incomplete":
        return f"gateway {end} ({rule}); websockets waits for the payload", not refused
    return f"gateway {end} ({rule}); websockets {expected_end}", not refused
