"""Items for the CBOR differential, and a strict reference built on `cbor2`.

The reference applies docs/decisions/0020-strict-cbor.md on top of `cbor2.loads`: only unsigned and
negative integers (64-bit arguments), byte and text strings, arrays, maps and the two booleans; at
most 16384 bytes, depth 4 and 32 items (keys count), the attestation-object limits; and the input
must be exactly what `cbor2.dumps` writes for the decoded value, which rules out non-shortest
heads, indefinite lengths, duplicate keys, tags and trailing bytes in one comparison.
"""

import random
import struct

import cbor2

MAXIMUM_BYTES, MAXIMUM_DEPTH, MAXIMUM_ITEMS = 16384, 4, 32


def head(major: int, argument: int, shortest: bool) -> bytes:
    """A CBOR head, in shortest form unless `shortest` is False (then one size wider when it fits)."""
    widths = [(24, 0), (256, 1), (65536, 2), (2**32, 4), (2**64, 8)]
    size = next(index for index, (limit, _) in enumerate(widths) if argument < limit)
    if not shortest and size < 4:
        size += 1
    if size == 0:
        return bytes([major << 5 | argument])
    width = widths[size][1]
    code = {1: 24, 2: 25, 4: 26, 8: 27}[width]
    return bytes([major << 5 | code]) + argument.to_bytes(width, "big")


def item(rng: random.Random, depth: int) -> bytes:
    shortest = rng.random() > 0.03
    choice = rng.random()
    if choice < 0.02:
        return rng.choice([b"\xf6", b"\xf7", b"\xf4" * 2, b"\xff", b"\xe0", b"\xf8\x20", b"\xfc", b"\x1c", b"\x5f\xff",
                           b"\xfb" + struct.pack(">d", 1.5), b"\xf9\x3c\x00", b"\xc1\x01", b"\xc2\x41\x01",
                           b"\x7f\x61a\xff", b"\x9f\xff", b"\xbf\xff"])
    if choice < 0.2:
        return head(0, rng.choice([0, 1, 23, 24, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**64 - 1]), shortest)
    if choice < 0.3:
        return head(1, rng.choice([0, 23, 24, 255, 2**64 - 1]), shortest)
    if choice < 0.45:
        payload = bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 5, 24, 32])))
        return head(2, len(payload), shortest) + payload
    if choice < 0.6:
        payload = rng.choice([b"fmt", b"authData", b"attStmt", b"", b"x5c", b"\xc3\xa9", b"\xff", b"\xed\xa0\x80",
                              b"\xc0\x80", b"a\x00b"])
        return head(3, len(payload), shortest) + payload
    if choice < 0.65:
        return rng.choice([b"\xf4", b"\xf5"])
    count = rng.choice([0, 1, 2, 3, 5])
    if depth >= MAXIMUM_DEPTH + 1:
        count = 0
    if choice < 0.8:
        return head(4, count, shortest) + b"".join(item(rng, depth + 1) for _ in range(count))
    keys = [key(rng) for _ in range(count)]
    if count and rng.random() < 0.1:
        keys[-1] = keys[0]
    return head(5, count, shortest) + b"".join(k + item(rng, depth + 1) for k in keys)


def key(rng: random.Random) -> bytes:
    return rng.choice([b"\x63fmt", b"\x68authData", b"\x67attStmt", b"\x01", b"\x20", b"\x03", b"\x38\x18",
                       b"\xf5", b"\xf4", b"\x41\x01", b"\x80", b"\x62\xc3\xa9"])


def generate(rng: random.Random) -> bytes:
    data = item(rng, 1)
    if rng.random() < 0.1:
        position = rng.randrange(len(data) + 1)
        data = rng.choice([data[:position], data + rng.choice([b"\x00", b"\xf5", b"\xff"]),
                           data[:position] + bytes([rng.randrange(256)]) + data[position + 1:]])
    return data


class Refused(Exception):
    pass


def tree(value, depth: int, count: list):
    """The gateway's tree form of an accepted value (DifferentialMode.swift), checking the limits."""
    count[0] += 1
    if depth > MAXIMUM_DEPTH or count[0] > MAXIMUM_ITEMS:
        raise Refused()
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        if not -(2**64) <= value < 2**64:
            raise Refused()
        return {"u": value} if value >= 0 else {"n": -1 - value}
    if isinstance(value, bytes):
        return {"b": value.hex()}
    if isinstance(value, str):
        return {"t": value.encode("utf-8").hex()}
    if isinstance(value, (list, tuple)):
        return {"a": [tree(element, depth + 1, count) for element in value]}
    if isinstance(value, (dict, cbor2.frozendict)):
        entries = []
        for entry_key, entry_value in value.items():
            entries.append([tree(entry_key, depth + 1, count), tree(entry_value, depth + 1, count)])
        return {"m": entries}
    raise Refused()


def reference(data: bytes):
    if len(data) > MAXIMUM_BYTES:
        return None
    try:
        value = cbor2.loads(data)
        if cbor2.dumps(value) != data:
            return None
        return tree(value, 1, [0])
    except (Refused, cbor2.CBORDecodeError, ValueError, TypeError, OverflowError, RecursionError):
        return None


def has_bool_and_int_keys(gateway_tree) -> bool:
    """A map whose keys include `true`/`false` and the integer 1/0: Python's dict takes them for one
    key, so cbor2 merges them and the round trip fails although the encodings are distinct."""
    if "a" in gateway_tree:
        return any(has_bool_and_int_keys(element) for element in gateway_tree["a"])
    if "m" not in gateway_tree:
        return False
    keys = [entry[0] for entry in gateway_tree["m"]]
    flags = {key["bool"] for key in keys if "bool" in key}
    numbers = {key["u"] for key in keys if "u" in key}
    if flags & {bool(number) for number in numbers if number in (0, 1)}:
        return True
    return any(has_bool_and_int_keys(part) for entry in gateway_tree["m"] for part in entry)


def judge(data: bytes, gateway_line: dict):
    expected = reference(data)
    if gateway_line["verdict"] != "accept":
        return None if expected is None else ("gateway refuses what the reference accepts", False)
    if expected is None:
        if has_bool_and_int_keys(gateway_line["value"]):
            return "gateway accepts a map with keys true and 1 (or false and 0) that cbor2 merges", False
        return "gateway accepts what the reference refuses", True
    if gateway_line["value"] != expected:
        return "gateway reads a different value from the reference", True
    return None
