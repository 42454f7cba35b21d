"""Relay messages for the relay-message differential, and a reference reader on Python's `json`.

The gateway's `NostrRelayMessage` reads a relay's text message (NIP-01, NIP-42 `AUTH`) with its
strict JSON reader at most 8 containers deep. The reference reads the text with the strict reader of
json_cases (the same rules as the JSON differential: UTF-8 without BOM, no duplicate members, no
NaN, no lone surrogates) at depth 8, then NIP-01's shapes:

    ["EVENT", <subscription id>, <event object>]     ["EOSE", <subscription id>]
    ["CLOSED", <subscription id>, <message>]         ["NOTICE", <message>]
    ["OK", <event id>, <true|false>, <message>]      ["AUTH", <challenge>]

It reads the fields at those positions (a missing or non-string message as ""), and separately
lists every NIP-01 rule the message breaks beyond its reading (extra elements, a missing message, a
subscription id that is empty or over 64 characters, an event id that is not 64 lowercase hex
digits). A message the reference cannot read is one the gateway must ignore; one it reads must be
read alike; a broken rule the gateway tolerates is an explained category.
"""

import random

import json_cases

MAXIMUM_DEPTH = 8
TYPES = ["EVENT", "EOSE", "CLOSED", "NOTICE", "OK", "AUTH"]
OTHER_TYPES = ['"event"', '"REQ"', '"COUNT"', '""', '"EVENT "', '"\\u0045VENT"', '"E\\u0056ENT"', "7", "null", "[]"]
HEX_ID = "a" * 63 + "1"
STRINGS = [
    '"sub"', '"s"', '""', '"' + HEX_ID + '"', '"' + "0123456789abcdef" * 4 + '"', '"' + "0123456789ABCDEF" * 4 + '"',
    '"' + "x" * 65 + '"', '"' + "x" * 64 + '"', '"duplicate: already have this event"', '"auth-required: sign in"',
    '"caf\u00e9"', '"\\u00e9\\n\\t"', '"\\ud83d\\ude00"', '"\\u0000"', '"restricted: \\"quoted\\""', '"\\ud800"',
]
OTHER_VALUES = ["true", "false", "null", "0", "1.5", "-1", "{}", "[]", '["a"]', '{"a":1}']


def space(rng: random.Random) -> str:
    return rng.choice(["", "", "", " ", "\n", "\t", " \r\n "])


def string(rng: random.Random) -> str:
    return json_cases.pick(rng, STRINGS, 15)


def nested(rng: random.Random, depth: int) -> str:
    """A value `depth` containers deep (the message array and the event object come on top)."""
    text = rng.choice(["1", '"v"', "[]", "{}"])
    for _ in range(depth):
        text = rng.choice(["[" + text + "]", '{"n":' + text + "}"])
    return text


def event(rng: random.Random) -> str:
    members = [
        ('"id"', '"' + HEX_ID + '"'), ('"pubkey"', '"' + "b" * 64 + '"'), ('"created_at"', "1700000000"),
        ('"kind"', rng.choice(["1059", "1", "0"])), ('"tags"', rng.choice(['[]', '[["p","' + "c" * 64 + '"]]',
                                                                          '[["e"],["t","x","y"]]'])),
        ('"content"', string(rng)), ('"sig"', '"' + "d" * 128 + '"'),
    ]
    if rng.random() < 0.2:
        members.append(('"extra"', nested(rng, rng.randint(3, 8))))
    if rng.random() < 0.05:
        members.append(rng.choice(members))
    rng.shuffle(members)
    members = members[:len(members) - (1 if rng.random() < 0.1 else 0)]
    return "{" + ",".join(space(rng) + name + space(rng) + ":" + space(rng) + value for name, value in members) + "}"


def value(rng: random.Random) -> str:
    choice = rng.random()
    if choice < 0.5:
        return string(rng)
    if choice < 0.7:
        return rng.choice(OTHER_VALUES)
    if choice < 0.85:
        return event(rng)
    return json_cases.value_text(rng, 2)


def arguments(rng: random.Random, kind: str) -> list:
    if kind == "EVENT":
        return [string(rng), event(rng)]
    if kind in ("EOSE", "NOTICE", "AUTH"):
        return [string(rng)]
    if kind == "CLOSED":
        return [string(rng), string(rng)]
    return [string(rng), rng.choice(["true", "false"]), string(rng)]


def generate(rng: random.Random) -> bytes:
    if rng.random() < 0.9:
        kind = rng.choice(TYPES)
        type_text = '"' + kind + '"'
        elements = arguments(rng, kind)
    else:
        type_text = rng.choice(OTHER_TYPES)
        elements = [value(rng) for _ in range(rng.randint(0, 3))]
    if rng.random() < 0.3:
        action = rng.randrange(3)
        if action == 0 and elements:
            elements.pop()
        elif action == 1:
            elements.append(value(rng))
        elif elements:
            elements[rng.randrange(len(elements))] = value(rng)
    text = space(rng) + "[" + ",".join(space(rng) + item + space(rng) for item in [type_text] + elements) + "]"
    if rng.random() < 0.02:
        text = rng.choice(["{}", '"EOSE"', "", "[", '["EOSE","s"]x', '{"0":"EOSE"}'])
    data = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.1:
        data = json_cases.mutate(rng, data)
    return data


def text_hex(text: str) -> str:
    return text.encode("utf-8").hex()


def reference(data: bytes):
    """(reading, broken rules) where reading is the gateway's verdict line as the reference reads the
    message, or None when the message is not one to read."""
    try:
        message = json_cases.strict_value(data, MAXIMUM_DEPTH)
    except json_cases.Refused:
        return None, []
    if not isinstance(message, list) or not message or not isinstance(message[0], str):
        return None, []
    kind, fields = message[0], message[1:]
    arity = {"EVENT": 2, "EOSE": 1, "CLOSED": 2, "NOTICE": 1, "OK": 3, "AUTH": 1}
    if kind not in arity:
        return None, []

    def text(index: int):
        return fields[index] if index < len(fields) and isinstance(fields[index], str) else None

    def is_object(item) -> bool:
        return isinstance(item, tuple) and item[0] == "object"

    broken = []
    if len(fields) > arity[kind]:
        broken.append("elements after the last NIP-01 defines")
    reading = {"verdict": "accept", "type": kind}
    if kind in ("EVENT", "EOSE", "CLOSED"):
        subscription = text(0)
        if subscription is None:
            return None, []
        if not 1 <= len(subscription) <= 64:
            broken.append("a subscription id that is empty or over 64 characters")
        reading["subscription_id"] = text_hex(subscription)
    if kind == "EVENT":
        if len(fields) < 2 or not is_object(fields[1]):
            return None, []
        reading["event"] = json_cases.serialize(fields[1], 1).encode("utf-8").hex()
    elif kind == "CLOSED":
        if text(1) is None:
            broken.append("no message string")
        reading["message"] = text_hex(text(1) or "")
    elif kind in ("NOTICE", "AUTH"):
        if text(0) is None:
            return None, []
        reading["message" if kind == "NOTICE" else "challenge"] = text_hex(text(0))
    elif kind == "OK":
        if text(0) is None or len(fields) < 2 or not isinstance(fields[1], bool):
            return None, []
        if len(text(0)) != 64 or any(character not in "0123456789abcdef" for character in text(0)):
            broken.append("an event id that is not 64 lowercase hex digits")
        if text(2) is None:
            broken.append("no message string")
        reading.update(event_id=text_hex(text(0)), accepted=fields[1], message=text_hex(text(2) or ""))
    return reading, broken


def judge(data: bytes, gateway_line: dict):
    reading, broken = reference(data)
    if gateway_line["verdict"] != "accept":
        return None if reading is None else (f"gateway ignores a {reading['type']} the reference reads", False)
    if reading is None:
        return "gateway reads a message the reference does not", True
    if gateway_line != reading:
        return "gateway reads a message differently from the reference", True
    if broken:
        return f"gateway reads a {reading['type']} with {broken[0]}", False
    return None
