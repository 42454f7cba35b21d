#!/usr/bin/env python3
"""Differential runs of the gateway's strict parsers against independent ones (docs/reliability.md).

    differential.py http|json|cbor --binary PUSH_FUZZ [--count N] [--seed S] [--batch B] [--table]
        Generates N seeded inputs, has the gateway's parser judge them (`push-fuzz --differential`),
        judges them with the references, and counts disagreements by category. Exits 1 when any
        disagreement is not in the explained list below (it prints up to five with their input).
    differential.py check http|json|cbor RECORDS
        Compares given gateway verdicts instead: RECORDS holds JSON lines {"input": hex, "gateway":
        {verdict line}}. The Swift test DifferentialComparerTests uses it to prove a disagreement
        fails the comparison.
"""

import argparse
import collections
import contextlib
import json
import random
import struct
import subprocess
import sys

import cbor_cases
import der_cases
import http_cases
import json_cases
import nip44_cases
import relay_cases
import websocket_cases

# Every category a run may show, and why it is acceptable. Anything else fails the run. The rule
#: the gateway never accepts what both references refuse and never reads a field
# differently from a reference that accepts; those breaches are never listed here.
ORIGIN_FORM = "only origin-form targets (docs/protocol.md §1); absolute-form, asterisk-form and targets without a leading / are refused, which proxies' parsers accept"
VERSIONS = "only HTTP/1.1 and HTTP/1.0 (decision 0001); h11 takes any HTTP/d.d, llhttp also 0.9 and 2.0"
TARGET_BYTES = "targets are visible ASCII without # (decision 0001); the references accept # fragments, DEL or bytes over 0x7F"
TRANSFER_ENCODING = "any Transfer-Encoding is 411 (docs/protocol.md §1); the references frame chunked bodies"
HEADER_RULES_FIRST = ("the gateway applies RFC 6455's header rules (§5.2 reserved bits and shortest lengths, §5.5 "
                      "control frames) before its size limit and closes with 1002; websockets checks max_size first "
                      "and closes with 1009")
HEADER_RULES_EARLY = ("the gateway refuses a frame from its header, before buffering the payload; websockets checks "
                      "reserved bits and control-frame rules (Frame.check) only once the whole payload has arrived")
SHORTEST_LENGTH = ("RFC 6455 §5.2: the minimal number of bytes MUST be used to encode the payload length; websockets "
                   "reads a length in a longer form")
PYASN1_NEGATIVE = ("X.690 §8.3.2 forbids an INTEGER whose first nine bits are ones; pyasn1 0.6.3's DER encoder "
                   "writes -2^(8k-1) so (-128 as ff 80) and its decoder reads it, so its round trip refuses the "
                   "minimal form (80) and accepts the redundant one")
EXPLAINED = {
    "http": {
        "gateway 400 target not in origin-form; accepted by h11": ORIGIN_FORM,
        "gateway 400 target not in origin-form; accepted by llhttp and h11": ORIGIN_FORM,
        "gateway 400 target not in origin-form; accepted by llhttp": ORIGIN_FORM,
        "gateway 400 unsupported HTTP version; accepted by h11": VERSIONS,
        "gateway 400 unsupported HTTP version; accepted by llhttp and h11": VERSIONS,
        "gateway 400 unsupported HTTP version; accepted by llhttp": VERSIONS,
        "gateway 400 bad request target; accepted by llhttp and h11": TARGET_BYTES,
        "gateway 400 bad request target; accepted by h11": TARGET_BYTES,
        "gateway 400 bad request target; accepted by llhttp": TARGET_BYTES,
        "gateway 411 transfer-encoding; accepted by h11": TRANSFER_ENCODING,
        "gateway 411 transfer-encoding; accepted by llhttp and h11": TRANSFER_ENCODING,
        "gateway 411 transfer-encoding; accepted by llhttp": TRANSFER_ENCODING,
        "gateway 400 bad host; accepted by llhttp":
            "HTTP/1.1 needs exactly one Host, HTTP/1.0 at most one (RFC 9112 §3.2); llhttp does not count Host, h11 refuses too",
        "gateway 400 bare line feed; accepted by h11":
            "every line ends in CRLF (docs/protocol.md §1); h11 takes a bare LF as a line end, as RFC 9112 §2.2 allows",
        "gateway 400 bare line feed; accepted by llhttp":
            "a bare LF before the request line; llhttp skips it, the gateway refuses a bare LF anywhere in the head",
        "gateway 400 bad request line: method; accepted by llhttp":
            "a bare CR before the request line; llhttp skips it, the gateway refuses a bare CR anywhere in the head",
        "gateway 400 empty line before the request line; accepted by llhttp":
            "empty lines before the request line are refused (decision 0211); llhttp skips them, h11 refuses them",
        "gateway 400 obsolete line folding; accepted by h11":
            "obs-fold is refused (docs/protocol.md §1, RFC 9112 §5.2); h11 unfolds it into one value",
        "gateway 400 bad header value; accepted by h11":
            "control bytes and DEL in a field value are refused (RFC 9110 §5.5); h11 accepts every byte but NUL, CR and LF",
        "gateway 411 length required; accepted by llhttp and h11":
            "POST, PUT and PATCH must carry Content-Length (docs/protocol.md §1); the references read no body",
        "gateway 413 body too large; accepted by h11":
            "the route's body limit is decided from Content-Length (docs/protocol.md §1); h11 has no limit, llhttp refuses lengths past 64 bits",
        "gateway accepts; llhttp refuses: Invalid method encountered":
            "any method token is parsed so that other methods get 405 (docs/protocol.md §1); llhttp knows only registered methods, h11 accepts tokens",
        "gateway accepts; llhttp refuses: Duplicate Content-Length":
            "repeated byte-identical Content-Length fields are one length (RFC 9112 §6.3), as h11 reads them; llhttp refuses any repeat",
        "gateway accepts; llhttp refuses: Invalid character in Content-Length":
            "a list of identical lengths (7, 7) is that length (RFC 9112 §6.3), as h11 reads it; llhttp refuses lists",
        "gateway closes a connection llhttp would keep alive":
            "HTTP/1.0 with Connection: close, keep-alive: close wins at the gateway (decision 0211), llhttp keeps alive",
    },
    "json": {},
    "cbor": {
        "gateway accepts a map with keys true and 1 (or false and 0) that cbor2 merges":
            "the keys are distinct CBOR items (decision 0020); Python's dict takes True for 1, so the reference's round trip fails",
    },
    "der": {
        "gateway accepts an empty SEQUENCE or SET; pyasn1 refuses":
            "pyasn1 0.6.3 without a schema fails on an empty SEQUENCE or SET (AttributeError: no component to type "
            "it by); DER allows one (an empty AuthorizationList is one)",
        "gateway accepts a primitive element with a non-universal tag; pyasn1 refuses":
            "an IMPLICIT-tagged primitive ([1] issuerUniqueID, [2] dNSName) has no type without a schema, so pyasn1 "
            "cannot decode it; the strict reader checks its header and keeps its contents",
        "gateway accepts an explicit tag around no element or several; pyasn1 refuses":
            "pyasn1 takes a constructed context, application or private tag for an EXPLICIT tag around exactly one "
            "value; an IMPLICIT-tagged SEQUENCE (any number of elements) needs a schema",
        "gateway accepts a negative power of two INTEGER, which pyasn1 writes with a redundant ff octet; pyasn1 refuses":
            PYASN1_NEGATIVE,
        "gateway refuses a negative INTEGER with nine leading one bits; pyasn1 writes it": PYASN1_NEGATIVE,
        "gateway accepts string contents that are not of the string type's character set; pyasn1 refuses":
            "the strict reader keeps string contents as bytes and never reads them as text (no field the gateway "
            "reads is a string type); pyasn1 decodes them in the type's character set",
        "gateway accepts a time whose text pyasn1's DER writer refuses; pyasn1 refuses":
            "time contents are checked where a time is read (DERElement.time(): a certificate's validity, refused "
            "there unless YYMMDDHHMMSSZ or YYYYMMDDHHMMSSZ), not by DER.parse",
        "gateway accepts a REAL; pyasn1 refuses":
            "the strict reader does not check REAL contents (no field the gateway reads is a REAL); pyasn1 does",
        "gateway accepts a universal tag number pyasn1 has no type for; pyasn1 refuses":
            "universal types pyasn1 has no class for (EXTERNAL, EMBEDDED PDV, RELATIVE-OID, TIME, numbers from 31) are "
            "kept as elements; pyasn1 cannot decode them without a schema",
        "gateway accepts a SET whose elements are not in the order pyasn1 writes; pyasn1 refuses":
            "the strict reader does not check the order of SET elements (X.690 §11.6); the verifier reads its SETs "
            "(purposes, package infos, digests) as unordered collections, so the order cannot change a decision; "
            "pyasn1 writes the elements back sorted (by tag, then by encoding) and nothing else differs",
        "gateway refuses a tag number beyond four octets; pyasn1 reads it":
            "tag numbers are read up to four subsequent octets (2^28 - 1, far beyond Android's 724; DERError."
            "unsupportedTag); pyasn1 reads any size",
        "gateway refuses a constructed string (X.690 §10.2); pyasn1 writes back the form it read":
            "DER encodes string types only in the primitive form; pyasn1 decodes an empty constructed string and "
            "writes it back constructed, so its round trip passes",
        "gateway does not read an OBJECT IDENTIFIER arc beyond 64 bits":
            "DERElement.objectIdentifier() refuses an arc over 64 bits (outOfRange), so no OID the gateway compares "
            "has one; pyasn1 reads arcs of any size",
        "gateway reads a certificate cryptography refuses in the issuer or subject name":
            "AttestationCertificate reads issuer and subject as SEQUENCEs and compares nothing inside them (the chain "
            "is linked by signatures, docs/protocol.md §5a); cryptography parses the names",
        "gateway reads a certificate cryptography refuses in the SubjectPublicKeyInfo":
            "the SubjectPublicKeyInfo is kept as its DER; the key in it is decoded, and a malformed one refused, when "
            "a signature is verified (X509PublicKey); cryptography parses it at load",
        "gateway reads a certificate cryptography refuses in the algorithm":
            "an AlgorithmIdentifier outside the six, or with parameters its RFC does not allow, parses as an unknown "
            "algorithm that verifies under no key (AttestationCertificate.signatureAlgorithm is nil)",
        "gateway reads a certificate with an extension value cryptography refuses":
            "extension values other than the KeyDescription are kept uninterpreted (criticality is not evaluated, "
            "docs/protocol.md §5a); cryptography parses the ones it knows when the extensions are read",
        "gateway reads an extension whose criticality FALSE is written out; cryptography refuses it":
            "X.690 §11.5: DER omits a DEFAULT value; AttestationCertificate reads the BOOLEAN and does not evaluate "
            "criticality, so its value cannot change a decision",
        "gateway refuses a certificate cryptography reads: only X.509 v3":
            "docs/protocol.md §5a step 1 reads only v3 certificates; cryptography reads v1 too",
        "gateway refuses a certificate cryptography reads: the signed and the outer signature algorithms are the same "
        "(RFC 5280 §4.1.1.2)": "cryptography does not compare the two identifiers when it loads a certificate",
        "gateway refuses a certificate cryptography reads: no extension twice (RFC 5280 §4.2)":
            "cryptography finds a repeated extension only when the extensions are read, the gateway at parse time",
        "gateway refuses a certificate cryptography reads: a signature BIT STRING of whole octets":
            "signatures are whole octets (docs/protocol.md §5a); cryptography keeps the bits",
        "gateway refuses a certificate cryptography reads: times as RFC 5280 §4.1.2.5 writes them (YYMMDDHHMMSSZ, "
        "YYYYMMDDHHMMSSZ), real dates": "cryptography reads a wider set of time forms",
        "gateway reads a KeyDescription with a value of another type under an authorization the gateway does not "
        "read; the schema refuses it":
            "AuthorizationList keeps the authorizations docs/protocol.md §5a does not read as uninterpreted "
            "elements, whatever their type; Android's schema types each one",
        "gateway reads a KeyDescription with an authorization tag Android's schema does not list; the schema refuses it":
            "Android adds authorization tags over versions; the gateway keeps unknown ones (in ascending order, each "
            "once) uninterpreted",
    },
    "websocket": {
        **{f"gateway protocol_error ({rule}); websockets message_too_big": HEADER_RULES_FIRST for rule in (
            "reserved bits", "fragmented control frame", "control frame over 125 bytes", "64-bit length under 65536")},
        "gateway protocol_error (64-bit length with the top bit set); websockets message_too_big":
            "RFC 6455 §5.2: the most significant bit of a 64-bit length MUST be 0, so the gateway closes with 1002; "
            "websockets reads the length as unsigned and closes with 1009 for its size",
        **{f"gateway protocol_error ({rule}); websockets waits for the payload": HEADER_RULES_EARLY for rule in (
            "reserved bits", "fragmented control frame", "control frame over 125 bytes")},
        **{f"gateway protocol_error ({rule}); websockets {outcome}": SHORTEST_LENGTH
           for rule in ("16-bit length under 126", "64-bit length under 65536")
           for outcome in ("reads the frame", "waits for the payload")},
    },
    "nip44": {
        "gateway refuses base64 with nonzero unused bits that the reference decodes":
            "the gateway's base64 is strict (PushCrypto Base64: the unused low bits of the last symbol are zero, so "
            "every byte string has one encoding); Python's b64decode ignores them; nostr-sdk refuses them too",
    },
    "relay": {
        **{f"gateway reads a {kind} with elements after the last NIP-01 defines":
           "NostrRelayMessage tolerates trailing elements NIP-01 does not define (relays add them); the reference "
           "reads the same fields" for kind in ("EVENT", "EOSE", "CLOSED", "NOTICE", "OK", "AUTH")},
        **{f"gateway reads a {kind} with a subscription id that is empty or over 64 characters":
           "NIP-01's 1..64 characters bind the client that chooses the id; the relay session compares a received "
           "id with its own, so another one matches nothing" for kind in ("EVENT", "EOSE", "CLOSED")},
        "gateway reads a OK with an event id that is not 64 lowercase hex digits":
            "the relay session matches an OK's id with the ids of the events it sent; an id of another form matches none",
        **{f"gateway reads a {kind} with no message string":
           "a missing or non-string message reads as \"\" (NostrRelayMessage); the gateway only logs it"
           for kind in ("CLOSED", "OK")},
    },
}

KINDS = {"http": http_cases, "json": json_cases, "cbor": cbor_cases, "der": der_cases, "websocket": websocket_cases,
         "nip44": nip44_cases, "relay": relay_cases}


def gateway_lines(binary: str, kind: str, inputs: list) -> list:
    """The gateway's verdict lines for `inputs`, from one push-fuzz process."""
    stream = b"".join(struct.pack(">I", len(data)) + data for data in inputs)
    result = subprocess.run([binary, "--differential", kind], input=stream, capture_output=True, check=True)
    lines = result.stdout.decode().splitlines()
    if len(lines) != len(inputs):
        sys.exit(f"push-fuzz answered {len(lines)} lines for {len(inputs)} inputs")
    return [json.loads(line) for line in lines]


class Tally:
    def __init__(self, kind: str):
        self.kind = kind
        self.inputs = 0
        self.accepted = 0
        self.categories = collections.Counter()
        self.examples = {}

    def add(self, data: bytes, gateway_line: dict):
        self.inputs += 1
        self.accepted += getattr(KINDS[self.kind], "accepted", lambda line: line["verdict"] == "accept")(gateway_line)
        outcome = KINDS[self.kind].judge(data, gateway_line)
        if outcome is None:
            return
        category, hard = outcome
        key = ("UNEXPLAINED " if hard or category not in EXPLAINED[self.kind] else "") + category
        self.categories[key] += 1
        self.examples.setdefault(key, data)

    @property
    def unexplained(self) -> list:
        return [key for key in self.categories if key.startswith("UNEXPLAINED ")]

    def report(self, table: bool) -> int:
        disagreements = sum(self.categories.values())
        print(f"differential {self.kind}: {self.inputs} inputs ({self.accepted} accepted by the gateway), "
              f"{disagreements} disagreements in "
              f"{len(self.categories)} categories, {len(self.unexplained)} unexplained")
        for key, count in sorted(self.categories.items(), key=lambda item: -item[1]):
            if table:
                print(f"| {key} | {count} | {EXPLAINED[self.kind].get(key, '')} |")
            else:
                print(f"  {count:8d}  {key}")
        for key in self.unexplained[:5]:
            print(f"  example of {key}: {self.examples[key].hex()}")
        return 1 if self.unexplained else 0


def run(arguments) -> int:
    rng = random.Random(arguments.seed)
    tally = Tally(arguments.kind)
    remaining = arguments.count
    while remaining > 0:
        batch = [KINDS[arguments.kind].generate(rng) for _ in range(min(arguments.batch, remaining))]
        remaining -= len(batch)
        for data, line in zip(batch, gateway_lines(arguments.binary, arguments.kind, batch)):
            tally.add(data, line)
        if arguments.checkpoint:
            # The report so far, for a long run that may be stopped before it ends.
            with open(arguments.checkpoint, "w") as checkpoint, contextlib.redirect_stdout(checkpoint):
                tally.report(arguments.table)
    return tally.report(arguments.table)


def check(arguments) -> int:
    tally = Tally(arguments.kind)
    with open(arguments.records) as records:
        for line in records:
            record = json.loads(line)
            tally.add(bytes.fromhex(record["input"]), record["gateway"])
    return tally.report(False)


def main() -> int:
    if sys.argv[1:2] == ["check"]:
        parser = argparse.ArgumentParser(prog="differential.py check")
        parser.add_argument("kind", choices=sorted(KINDS))
        parser.add_argument("records")
        return check(parser.parse_args(sys.argv[2:]))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=sorted(KINDS))
    parser.add_argument("--binary", required=True, help="the push-fuzz executable")
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--batch", type=int, default=20_000)
    parser.add_argument("--table", action="store_true", help="print categories as Markdown table rows")
    parser.add_argument("--checkpoint", help="rewrite this file with the report so far after every batch")
    return run(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
