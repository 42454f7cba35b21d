"""Documents for the JSON differential, and a strict reference reader built on Python's `json`.

The reference applies the rules of docs/protocol.md §1 and docs/decisions/0010-strict-json-details.md
on top of `json.loads`: UTF-8 only (no byte-order mark), duplicate member names refused at any depth,
no NaN or Infinity, no lone surrogate escapes, at most 32 nested containers; an integer is a token
without fraction or exponent inside signed 64 bits (other numbers, `-0` included, keep their text).
An accepted document is compared through the gateway's canonical serialization.
"""

import json
import random

MAXIMUM_DEPTH = 32

NUMBERS = [
    "0", "-0", "1", "-1", "7", "1.0", "1e3", "1E+3", "1e-3", "-0.0", "0.5", "9223372036854775807",
    "-9223372036854775808", "9223372036854775808", "-9223372036854775809", "123456789012345678901234567890",
    "9007199254740993", "1.5e308", "1e400", "01", "1.", ".5", "-", "+1", "1e", "1e+", "0x10", "1_000", "00",
    "-01", "Infinity", "NaN", "-Infinity",
]
STRINGS = [
    '"v"', '"\\u0076"', '"K"', '"\\u212a"', '"\\u212A"', '""', '"\\u0000"', '"\\ud83d\\ude00"', '"\\/"',
    '"\\b\\f\\n\\r\\t"', '"caf\u00e9"', '"\u212a"', '"a\\"b"', '"\\\\"', '"\u007f"', '"\\u0041"',
    '"\\ud800"', '"\\udc00"', '"\\ud83d"', '"\\x41"', '"\\u00"', '"\\U0041"', '"tab\there"', "'single'",
]
LITERALS = ["true", "false", "null", "True", "nul", "NULL", "truee"]
WHITESPACE = ["", "", "", " ", "\t", "\n", "\r", " \n ", "\u00a0", "\u000b", "\u000c", "\u2028", "\ufeff"]
KEYS = ['"c"', '"d"', '"e"', '"f"', '"g"', '"h"', '"challenge"', '"expires_at"', '"relay_pubkey"', '"v"', '"\\u0076"', '"a"', '"b"', '"K"', '"\\u212a"', '"v "', '"\\ud800"', '"\u00e9"', '"e\u0301"']


def pick(rng: random.Random, values: list, valid: int) -> str:
    """Mostly one of the first `valid` values (valid JSON), sometimes any."""
    return rng.choice(values[:valid]) if rng.random() < 0.93 else rng.choice(values)


def value_text(rng: random.Random, depth: int) -> str:
    choice = rng.random()
    if depth > 0 and choice < 0.35:
        return container_text(rng, depth - 1)
    if choice < 0.6:
        return pick(rng, NUMBERS, 17)
    if choice < 0.85:
        return pick(rng, STRINGS, 16)
    return pick(rng, LITERALS, 3)


def container_text(rng: random.Random, depth: int) -> str:
    space = lambda: pick(rng, WHITESPACE, 8)
    count = rng.choice([0, 1, 1, 2, 2, 3, 4])
    if rng.random() < 0.6:
        keys = [rng.choice(KEYS) for _ in range(count)]
        members = [space() + key + space() + ":" + space() + value_text(rng, depth) + space() for key in keys]
        text = "{" + ",".join(members) + "}"
    else:
        text = "[" + ",".join(space() + value_text(rng, depth) + space() for _ in range(count)) + "]"
    if rng.random() < 0.03:
        text = text[:-1] + "," + text[-1]
    return text


def generate(rng: random.Random) -> bytes:
    kind = rng.random()
    if kind < 0.05:
        # nesting around the depth limit
        depth = rng.randint(MAXIMUM_DEPTH - 2, MAXIMUM_DEPTH + 2)
        opener = rng.choice(["[", '{"a":'])
        closer = "]" if opener == "[" else "}"
        text = opener * depth + rng.choice(["1", "[]", "{}"]) + closer * depth
    elif kind < 0.12:
        text = value_text(rng, 0)
    else:
        text = rng.choice(WHITESPACE) + container_text(rng, rng.randint(0, 3)) + rng.choice(WHITESPACE)
        if rng.random() < 0.03:
            text += rng.choice(["x", "{}", "0", "\u0000", " ,"])
    data = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.1:
        data = mutate(rng, data)
    return data


def mutate(rng: random.Random, data: bytes) -> bytes:
    position = rng.randrange(len(data) + 1)
    action = rng.randrange(4)
    if action == 0:
        return data[:position] + data[position + 1:]
    odd = rng.choice([b"\x00", b"\x1f", b"\x7f", b"\x80", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf",
                      b"\xef\xbb\xbf", b'"', b"\\", b",", b":", b"]", b"}", b" "])
    if action == 1:
        return data[:position] + odd + data[position:]
    if action == 2 and data:
        position = min(position, len(data) - 1)
        return data[:position] + odd + data[position + 1:]
    return data[:position]


class Refused(Exception):
    pass


def refuse(*_):
    raise Refused()


def unique_members(pairs):
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        raise Refused()
    return ("object", pairs)


def integer_or_number(text: str):
    if text != "-0" and -(2**63) <= int(text) < 2**63:
        return ("integer", text)
    return ("number", text)


def strict_value(data: bytes, maximum_depth: int = MAXIMUM_DEPTH):
    """The document as the strict reference reads it (objects as ("object", pairs), numbers as
    ("integer" or "number", text)); raises Refused when it refuses it."""
    try:
        text = data.decode("utf-8")
        if text.startswith("\ufeff"):
            raise Refused()
        value = json.loads(text, object_pairs_hook=unique_members, parse_int=integer_or_number,
                           parse_float=lambda number: ("number", number), parse_constant=refuse)
        serialize(value, 1, maximum_depth)
        return value
    except (ValueError, UnicodeEncodeError, RecursionError) as error:
        raise Refused() from error


def reference(data: bytes):
    """The canonical serialization of the document, or None when the strict reference refuses it."""
    try:
        return serialize(strict_value(data), 1).encode("utf-8")
    except Refused:
        return None


def escaped(text: str) -> str:
    """The gateway writer's escaping: exactly `"`, `\\` and U+0000..U+001F (docs/protocol.md §3)."""
    text.encode("utf-8")  # a lone surrogate from an escape is not a string: UnicodeEncodeError
    out = []
    for character in text:
        if character in '"\\':
            out.append("\\" + character)
        elif ord(character) < 0x20:
            out.append(f"\\u{ord(character):04x}")
        else:
            out.append(character)
    return '"' + "".join(out) + '"'


def serialize(value, depth: int, maximum_depth: int = MAXIMUM_DEPTH) -> str:
    if isinstance(value, tuple) and value[0] == "object":
        if depth > maximum_depth:
            raise Refused()
        return "{" + ",".join(escaped(name) + ":" + serialize(item, depth + 1, maximum_depth)
                              for name, item in value[1]) + "}"
    if isinstance(value, tuple):
        return value[1]
    if isinstance(value, list):
        if depth > maximum_depth:
            raise Refused()
        return "[" + ",".join(serialize(item, depth + 1, maximum_depth) for item in value) + "]"
    if isinstance(value, str):
        return escaped(value)
    if value is None:
        return "null"
    return "true" if value else "false"


def judge(data: bytes, gateway_line: dict):
    expected = reference(data)
    if gateway_line["verdict"] != "accept":
        return None if expected is None else ("gateway refuses what the reference accepts", False)
    if expected is None:
        return "gateway accepts what the reference refuses", True
    if bytes.fromhex(gateway_line["value"]) != expected:
        return "gateway reads a different value from the reference", True
    return None
