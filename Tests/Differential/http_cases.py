"""Request heads for the HTTP differential, and what llhttp (httptools) and h11 read from them.

A head is built from a well-formed request and then bent by a few seeded mutations: the smuggling
shapes (CL/TE combinations, duplicate, signed or padded Content-Length, chunked variants), CR/LF
variants, obs-fold, whitespace before the colon, NUL and high bytes, absolute-form and asterisk
targets, HTTP versions (docs/reliability.md, "Differential testing").
"""

import random

import h11
import httptools

# The fields the gateway acts on; the Swift side reports the same list (DifferentialMode.swift).
FIELDS = [
    "host", "content-length", "transfer-encoding", "content-type", "authorization", "x-forwarded-for",
    "x-forwarded-proto", "expect", "connection",
]

METHODS = [b"POST"] * 6 + [b"GET"] * 3 + [b"PUT", b"PATCH", b"DELETE", b"OPTIONS", b"HEAD", b"CONNECT", b"get",
                                          b"G@T", b"", b"PO ST", b"M-SEARCH", b"\xffPOST"]
TARGETS = [b"/v1/installations/challenges"] * 4 + [
    b"/", b"/v1/deliveries/apns?x=1", b"/a?", b"*", b"http://a/v1", b"https://push.example/v1", b"//a/b",
    b"/a#frag", b"/caf\xc3\xa9", b"/a\x00b", b"a", b"/a b", b"/%00", b"/a\tb", b"", b"/a\x7fb", b"/\xff",
]
VERSIONS = [b"HTTP/1.1"] * 6 + [b"HTTP/1.0"] * 2 + [
    b"HTTP/1.2", b"HTTP/2.0", b"HTTP/0.9", b"http/1.1", b"HTTP/11", b"HTTP/1.10", b"HTTP/1", b"", b"HTTP/1.1 ",
    b"HTTP /1.1", b"HTTP/3.0", b"HTTP/1.x",
]
VALUES = {
    "Host": [b"a", b"push.example", b"a:8080", b"", b"a b", b"[::1]:80", b"a,b", b"a\x00"],
    "Content-Length": [
        b"7", b"0", b"2", b"+7", b"-1", b"07", b"7, 7", b"7,7", b"7, 8", b" 7", b"7 ", b"0x7", b"7.0", b"",
        b"99999999999999999999", b"1e1", b"7,", b",7", b"\t7", b"7 7", b"\xd9\xa7",
    ],
    "Transfer-Encoding": [
        b"chunked", b"Chunked", b"CHUNKED", b"chunked, identity", b"identity", b"gzip, chunked", b"chunked ",
        b"xchunked", b"chunked;q=1", b"", b"gzip", b"chunked, chunked",
    ],
    "Content-Type": [b"application/json", b"application/json; charset=utf-8", b"text/plain", b""],
    "Authorization": [b"Nostr eyJraW5kIjoyNzIzNX0=", b"Basic YTpi", b"", b"Nostr \xc3\xa9"],
    "X-Forwarded-For": [b"192.0.2.1", b"192.0.2.1, 2001:db8::1", b"garbage", b""],
    "X-Forwarded-Proto": [b"https", b"http", b"HTTPS", b""],
    "Expect": [b"100-continue", b"100-Continue", b"nothing"],
    "Connection": [b"close", b"keep-alive", b"Close", b"close, keep-alive", b"te", b"Keep-Alive"],
    "X-Request-Id": [b"abc", b"\xff\xfe", b"a\tb", b"a  b"],
}
ODD_BYTES = [b"\x00", b"\x7f", b"\x01", b"\x0b", b"\x0c", b"\xff", b"\x80", b"\r", b"\n", b"\t", b" ", b":", b"\x1f"]
LINE_ENDINGS = [b"\n", b"\r", b"\r\r\n", b"\n\r", b"\r\n\r"]


def generate(rng: random.Random) -> bytes:
    """One request head (and the body its framing asks for, when that is plain)."""
    # Mostly a request the gateway serves, so that accepted heads are compared field by field too.
    plain = rng.random() < 0.6
    method = rng.choice(METHODS[:11] if plain else METHODS)
    separators = [b" ", b" "]
    target = rng.choice(TARGETS[:6] if plain else TARGETS)
    version = rng.choice(VERSIONS[:8] if plain else VERSIONS)
    names = ["Host", "Content-Type"]
    if method in (b"POST", b"PUT", b"PATCH") or rng.random() < 0.2:
        names.append("Content-Length")
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
        names.append(rng.choice(list(VALUES)))
    rng.shuffle(names)
    fields = [[name.encode(), b": ", rng.choice(VALUES[name]) if rng.random() < 0.3 else VALUES[name][0]]
              for name in names]
    lines_end = [b"\r\n"] * (len(fields) + 2)
    prefix = b""
    for _ in range(rng.choice([0, 0, 0, 0, 1, 1, 2, 3, 4])):
        kind = rng.randrange(16)
        if kind == 0 and fields:
            # whitespace before the colon (RFC 9112 §5.1)
            rng.choice(fields)[0] += rng.choice([b" ", b"\t", b"  "])
        elif kind == 1 and fields:
            # obs-fold: a continuation line
            index = rng.randrange(len(fields))
            fields.insert(index + 1, [rng.choice([b" ", b"\t"]), b"", rng.choice([b"x", b"chunked", b"7"])])
            lines_end.insert(index + 2, b"\r\n")
        elif kind == 2:
            lines_end[rng.randrange(len(lines_end))] = rng.choice(LINE_ENDINGS)
        elif kind == 3 and fields:
            # a hidden field behind a bare CR, or a bare CR/LF starting a line
            hidden = rng.choice(["Transfer-Encoding", "Content-Length", "Host", "Authorization"])
            index = rng.randrange(len(fields) + 1)
            fields.insert(index, [rng.choice([b"\r", b"\n", b"\r\r", b" \r"]) + hidden.encode(), b": ",
                                  rng.choice(VALUES[hidden])])
            lines_end.insert(index + 1, b"\r\n")
        elif kind == 4 and fields:
            field = rng.choice(fields)
            position = rng.randrange(len(field[2]) + 1)
            field[2] = field[2][:position] + rng.choice(ODD_BYTES) + field[2][position:]
        elif kind == 5 and fields:
            field = rng.choice(fields)
            position = rng.randrange(len(field[0]) + 1)
            field[0] = field[0][:position] + rng.choice(ODD_BYTES + [b"(", b"/", b"@", b"\xc3\xa9"]) + field[0][position:]
        elif kind == 6 and fields:
            # a duplicate, with the same or another value
            field = rng.choice(fields)
            name = field[0].decode("latin-1").strip()
            value = rng.choice(VALUES.get(name, [field[2]]))
            fields.insert(rng.randrange(len(fields) + 1), [field[0], b": ", rng.choice([field[2], value])])
            lines_end.insert(1, b"\r\n")
        elif kind == 7 and fields:
            rng.choice(fields)[0] = rng.choice([str.upper, str.lower, str.title])(rng.choice(names)).encode()
        elif kind == 8:
            fields.insert(rng.randrange(len(fields) + 1), [rng.choice([b"", b"nocolon", b" "]),
                                                          rng.choice([b": ", b"", b":"]), b"x"])
            lines_end.insert(1, b"\r\n")
        elif kind == 9:
            separators[rng.randrange(2)] = rng.choice([b"  ", b"\t", b"", b" \t", b"\x00"])
        elif kind == 10:
            prefix = rng.choice([b"\r\n", b"\r\n\r\n", b"\n", b"\r", b" "])
        elif kind == 11 and fields:
            # padding around the value: spaces, tabs, both
            field = rng.choice(fields)
            field[1] = rng.choice([b":", b":\t", b":  ", b": \t"])
            field[2] = field[2] + rng.choice([b" ", b"\t", b" \t ", b""])
        elif kind == 12:
            # an explicit CL/TE smuggling pair
            fields.append([b"Content-Length", b": ", rng.choice(VALUES["Content-Length"])])
            fields.append([b"Transfer-Encoding", b": ", rng.choice(VALUES["Transfer-Encoding"])])
            lines_end += [b"\r\n", b"\r\n"]
        elif kind == 13:
            target = rng.choice(TARGETS)[:-1] + rng.choice(ODD_BYTES + [b"?", b"#", b"%"])
        elif kind == 14:
            version = version[:-1] + rng.choice([b"0", b"1", b"9", b"\x00", b" "])
        else:
            method = rng.choice(METHODS) + rng.choice([b"", b"", b"\x00", b"\xff"])
    head = prefix + method + separators[0] + target + separators[1] + version + lines_end[0]
    for index, (name, colon, value) in enumerate(fields):
        head += name + colon + value + lines_end[index + 1]
    head += lines_end[-1]
    return head + body_for(fields)


def body_for(fields) -> bytes:
    """The body a plain framing promises: Content-Length bytes, or an empty chunked body."""
    lengths = [value for name, _, value in fields if name.lower() == b"content-length"]
    if any(b"chunked" in value.lower() for name, _, value in fields if name.lower() == b"transfer-encoding"):
        return b"0\r\n\r\n"
    if len(lengths) == 1 and lengths[0].isdigit() and int(lengths[0]) <= 64:
        return b"{" + b"x" * (int(lengths[0]) - 2) + b"}" if int(lengths[0]) >= 2 else b"x" * int(lengths[0])
    return b""


def strip_ows(value: bytes) -> bytes:
    """RFC 9112 §5: the OWS around a field value is not part of it. llhttp hands the bytes up to CR
    with any trailing OWS kept; h11 and the gateway strip it."""
    return value.strip(b" \t")


def content_length(values):
    """The length a parser that accepted these Content-Length values uses (it validated them)."""
    if not values:
        return None
    return int(values[0].split(b",")[0].strip(b" \t"))


def llhttp_read(data: bytes) -> dict:
    """The head as llhttp reads it: accepted once on_headers_complete fired (a later error belongs to
    the body), refused on an error before it, incomplete otherwise."""
    record = {"url": b"", "headers": [], "complete": False, "keep_alive": None}

    class Callbacks:
        def on_url(self, url):
            record["url"] += url

        def on_header(self, name, value):
            record["headers"].append((name.lower(), value))

        def on_headers_complete(self):
            record["complete"] = True
            # Read here: once the message is complete llhttp resets its connection flags.
            record["keep_alive"] = parser.should_keep_alive()

    parser = httptools.HttpRequestParser(Callbacks())
    error = None
    try:
        parser.feed_data(data)
    except httptools.HttpParserUpgrade:
        pass
    except httptools.HttpParserError as failure:
        error = str(failure) or type(failure).__name__
    if not record["complete"]:
        return {"verdict": "reject", "reason": error} if error else {"verdict": "incomplete"}
    values = {name: [strip_ows(v) for n, v in record["headers"] if n == name.encode()] for name in FIELDS}
    return {
        "verdict": "accept", "method": parser.get_method(), "target": record["url"],
        "version": parser.get_http_version(), "content_length": content_length(values["content-length"]),
        "keep_alive": record["keep_alive"], "fields": values,
    }


def h11_read(data: bytes) -> dict:
    """The head as h11 (server role) reads it."""
    connection = h11.Connection(h11.SERVER)
    try:
        connection.receive_data(data)
        event = connection.next_event()
    except h11.RemoteProtocolError as failure:
        return {"verdict": "reject", "reason": str(failure).split(":")[0]}
    if event is h11.NEED_DATA:
        return {"verdict": "incomplete"}
    headers = list(event.headers)
    values = {name: [v for n, v in headers if n == name.encode()] for name in FIELDS}
    return {
        "verdict": "accept", "method": bytes(event.method), "target": bytes(event.target),
        "version": event.http_version.decode(), "content_length": content_length(values["content-length"]),
        "fields": values,
    }


def gateway_read(line: dict) -> dict:
    """The Swift side's JSON line with its hex fields decoded."""
    if line["verdict"] != "accept":
        return line
    return {
        "verdict": "accept", "method": bytes.fromhex(line["method"]), "target": bytes.fromhex(line["target"]),
        "version": line["version"], "content_length": line["content_length"], "keep_alive": line["keep_alive"],
        "fields": {name: [bytes.fromhex(v) for v in values] for name, values in line["fields"].items()},
    }


def value_differences(gateway: dict, other: dict) -> list:
    """The fields an accepting parser reads differently from the gateway."""
    differences = [key for key in ("method", "target", "version", "content_length") if gateway[key] != other[key]]
    for name in FIELDS:
        if name != "content-length" and gateway["fields"][name] != other["fields"][name]:
            differences.append(name)
    return differences


def classify(gateway: dict, llhttp: dict, h11_result: dict):
    """None when the three agree; else (category, hard) where hard marks a breach of the rule: the
    gateway accepted what both refuse, or read a field differently from a parser that accepted."""
    others = {"llhttp": llhttp, "h11": h11_result}
    accepting = [name for name, result in others.items() if result["verdict"] == "accept"]
    if gateway["verdict"] == "accept":
        for name in accepting:
            differences = value_differences(gateway, others[name])
            if differences:
                return f"gateway reads {'/'.join(differences)} differently from {name}", True
        if not accepting:
            return "gateway accepts what llhttp and h11 refuse", True
        if llhttp["verdict"] == "accept" and gateway["keep_alive"] != llhttp["keep_alive"]:
            # Keeping a connection open that the client asked to close would be a breach; the reverse
            # only costs a reconnect.
            if gateway["keep_alive"]:
                return "gateway keeps alive a connection llhttp would close", True
            return "gateway closes a connection llhttp would keep alive", False
        if len(accepting) == 1:
            refusing = "h11" if accepting == ["llhttp"] else "llhttp"
            return f"gateway accepts; {refusing} refuses: {others[refusing].get('reason', 'incomplete')}", False
        return None
    if not accepting:
        return None
    status = f"{gateway['status']} {gateway['reason']}" if gateway["verdict"] == "reject" else "incomplete"
    return f"gateway {status}; accepted by {' and '.join(accepting)}", False


def judge(data: bytes, gateway_line: dict):
    return classify(gateway_read(gateway_line), llhttp_read(data), h11_read(data))
