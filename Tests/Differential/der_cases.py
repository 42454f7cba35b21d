"""Inputs for the DER differential, and the references: `pyasn1` for DER and KeyDescription, `cryptography`
for certificates.

The gateway reads every input three ways (push-fuzz `DERVerdict`): as strict DER under the certificate
limits (8192 bytes, depth 32), as an attestation certificate (`AttestationCertificate`) and as a
KeyDescription extension value (`KeyDescription`). The references:

- the element tree: `pyasn1.codec.der.decoder` without a schema, refused when bytes follow the element,
  when `pyasn1.codec.der.encoder` does not write the input back exactly (the one-encoding rule of
  X.690 §10–11: shortest definite lengths, minimal integers, primitive strings, sorted SET OF), or past
  the limits. Compared: every tag, the nesting, each primitive's contents and each OID's dotted form.
- the certificate: `cryptography.x509.load_der_x509_certificate` (a strict Rust DER reader). Compared:
  the serial number, the validity in Unix seconds, the SubjectPublicKeyInfo and the KeyDescription
  extension's value.
- the KeyDescription: `pyasn1` with Android's KeyDescription schema (below) and DER re-encoding, the
  enumerations in range, INTEGERs the gateway reads within 64 bits, and the attestationApplicationId
  octets decoded with their own schema. Compared: every field the gateway reads and the tags of both
  authorization lists.

Inputs: random TLV structures (the universal types, explicit tags, header and contents bent: non-minimal
lengths and tags, indefinite lengths, constructed strings, bad BOOLEAN, INTEGER, BIT STRING and OID
contents, truncation, trailing bytes), KeyDescriptions built field by field from the values Android
writes and bent ones, and the real certificates and KeyDescriptions of Fuzz/corpus/der mutated: a
random element's contents, tag or length form replaced, an element dropped, repeated or swapped, a
KeyDescription put in a certificate, or bytes flipped, cut and inserted.
"""

import datetime
import warnings
import glob
import json
import os
import random

from cryptography import x509
from pyasn1.codec.der import decoder as der_decoder
from pyasn1.codec.der import encoder as der_encoder
from pyasn1.error import PyAsn1Error
from pyasn1.type import namedtype, tag, univ

MAXIMUM_BYTES, MAXIMUM_DEPTH = 8192, 32
# cryptography warns on a serial number that is not positive; the comparison reads it all the same.
warnings.filterwarnings("ignore", message="Parsed a serial number")
KEY_DESCRIPTION_OID = "1.3.6.1.4.1.11129.2.1.17"
CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Fuzz", "corpus", "der")
CERTIFICATES = [open(path, "rb").read() for path in sorted(glob.glob(os.path.join(CORPUS, "*-[0-9].der")))]
KEY_DESCRIPTIONS = [open(path, "rb").read() for path in sorted(glob.glob(os.path.join(CORPUS, "*-key-description.der")))]


# ---------------------------------------------------------------------------------------------------
# Android's KeyDescription schema (the Key Attestation extension), in pyasn1.

def explicit(number: int, component):
    return component.subtype(explicitTag=tag.Tag(tag.tagClassContext, tag.tagFormatConstructed, number))


class IntegerSet(univ.SetOf):
    componentType = univ.Integer()


class RootOfTrust(univ.Sequence):
    componentType = namedtype.NamedTypes(
        namedtype.NamedType("verifiedBootKey", univ.OctetString()),
        namedtype.NamedType("deviceLocked", univ.Boolean()),
        namedtype.NamedType("verifiedBootState", univ.Enumerated()),
        namedtype.OptionalNamedType("verifiedBootHash", univ.OctetString()),
    )


# tag → (name, type) for every AuthorizationList field of Android's schema.
AUTHORIZATIONS = {
    1: IntegerSet, 2: univ.Integer, 3: univ.Integer, 4: IntegerSet, 5: IntegerSet, 6: IntegerSet, 7: univ.Null,
    8: univ.Integer, 10: univ.Integer, 200: univ.Integer, 203: IntegerSet, 303: univ.Null, 305: univ.Null,
    400: univ.Integer, 401: univ.Integer, 402: univ.Integer, 405: univ.Integer, 503: univ.Null, 504: univ.Integer,
    505: univ.Integer, 506: univ.Null, 507: univ.Null, 508: univ.Null, 509: univ.Null, 600: univ.Null,
    601: univ.OctetString, 701: univ.Integer, 702: univ.Integer, 703: univ.Null, 704: RootOfTrust, 705: univ.Integer,
    706: univ.Integer, 709: univ.OctetString, 710: univ.OctetString, 711: univ.OctetString, 712: univ.OctetString,
    713: univ.OctetString, 714: univ.OctetString, 715: univ.OctetString, 716: univ.OctetString,
    717: univ.OctetString, 718: univ.Integer, 719: univ.Integer, 720: univ.Null, 721: univ.Null,
    723: univ.OctetString, 724: univ.OctetString,
}


class AuthorizationList(univ.Sequence):
    componentType = namedtype.NamedTypes(*[
        namedtype.OptionalNamedType(f"tag{number}", explicit(number, kind())) for number, kind in AUTHORIZATIONS.items()
    ])


class KeyDescription(univ.Sequence):
    componentType = namedtype.NamedTypes(
        namedtype.NamedType("attestationVersion", univ.Integer()),
        namedtype.NamedType("attestationSecurityLevel", univ.Enumerated()),
        namedtype.NamedType("keyMintVersion", univ.Integer()),
        namedtype.NamedType("keyMintSecurityLevel", univ.Enumerated()),
        namedtype.NamedType("attestationChallenge", univ.OctetString()),
        namedtype.NamedType("uniqueId", univ.OctetString()),
        namedtype.NamedType("softwareEnforced", AuthorizationList()),
        namedtype.NamedType("hardwareEnforced", AuthorizationList()),
    )


class PackageInfo(univ.Sequence):
    componentType = namedtype.NamedTypes(
        namedtype.NamedType("packageName", univ.OctetString()), namedtype.NamedType("version", univ.Integer()))


class PackageInfos(univ.SetOf):
    componentType = PackageInfo()


class Digests(univ.SetOf):
    componentType = univ.OctetString()


class AttestationApplicationId(univ.Sequence):
    componentType = namedtype.NamedTypes(
        namedtype.NamedType("packageInfos", PackageInfos()), namedtype.NamedType("signatureDigests", Digests()))


# ---------------------------------------------------------------------------------------------------
# A DER writer for the generators (the references never use it).

def length_octets(length: int, form: str = "shortest") -> bytes:
    if form == "indefinite":
        return b"\x80"
    if length < 128 and form == "shortest":
        return bytes([length])
    width = max(1, (length.bit_length() + 7) // 8) + (1 if form == "padded" else 0)
    return bytes([0x80 | width]) + length.to_bytes(width, "big")


def identifier(tag_class: int, constructed: bool, number: int, high_form: bool = False) -> bytes:
    first = tag_class << 6 | (0x20 if constructed else 0)
    if number < 31 and not high_form:
        return bytes([first | number])
    digits = []
    while True:
        digits.insert(0, number & 0x7F)
        number >>= 7
        if not number:
            break
    return bytes([first | 0x1F]) + bytes(digit | 0x80 for digit in digits[:-1]) + bytes([digits[-1]])


def tlv(ident: bytes, contents: bytes, form: str = "shortest") -> bytes:
    if form == "indefinite":
        return ident + b"\x80" + contents + b"\x00\x00"
    return ident + length_octets(len(contents), form) + contents


def integer_contents(value: int) -> bytes:
    return value.to_bytes(max(1, (value + (value < 0)).bit_length() // 8 + 1), "big", signed=True)


def universal(number: int, contents: bytes, constructed: bool = False) -> bytes:
    return tlv(identifier(0, constructed, number), contents)


def sequence(*elements: bytes) -> bytes:
    return universal(16, b"".join(elements), True)


def der_set(*elements: bytes, sort: bool = True) -> bytes:
    return universal(17, b"".join(sorted(elements) if sort else elements), True)


def context(number: int, contents: bytes) -> bytes:
    return tlv(identifier(2, True, number), contents)


def parse(data: bytes, start: int = 0, end: int = None):
    """The generator's element list: [identifier, contents-or-children, constructed] per element;
    None when the bytes are not definite-length BER."""
    end = len(data) if end is None else end
    elements = []
    position = start
    while position < end:
        first = data[position]
        cursor = position + 1
        if first & 0x1F == 0x1F:
            while cursor < end and data[cursor] & 0x80:
                cursor += 1
            cursor += 1
        if cursor >= end:
            return None
        ident = data[position:cursor]
        length = data[cursor]
        cursor += 1
        if length & 0x80:
            width = length & 0x7F
            if width == 0 or width > 4 or cursor + width > end:
                return None
            length = int.from_bytes(data[cursor:cursor + width], "big")
            cursor += width
        if cursor + length > end:
            return None
        contents = data[cursor:cursor + length]
        children = parse(data, cursor, cursor + length) if first & 0x20 else None
        elements.append([ident, children if children is not None else contents, children is not None])
        position = cursor + length
    return elements


def serialize(elements) -> bytes:
    return b"".join(tlv(ident, serialize(body) if constructed else body) for ident, body, constructed in elements)


def every_element(elements):
    for index, (_, body, constructed) in enumerate(elements):
        yield elements, index
        if constructed:
            yield from every_element(body)


# ---------------------------------------------------------------------------------------------------
# Generators.

OIDS = [b"\x2a\x86\x48\xce\x3d\x04\x03\x02", b"\x55\x04\x03", b"\x2b\x06\x01\x04\x01\xd6\x79\x02\x01\x11", b"\x00",
        b"\x7f", b"\x81\x00", b"\x80\x01", b"\x2a\x86", b"", b"\x88\x37", b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f"]
TEXTS = [b"", b"Android", b"caf\xc3\xa9", b"\xff", b"\xc3", b"a b", b"\x00", b"*", b"\xed\xa0\x80"]
TIMES = [b"250926153046Z", b"20500101000000Z", b"491231235959Z", b"500101000000Z", b"250230000000Z", b"2509261530Z",
         b"250926153046+0100", b"20250926153046.5Z", b"991231235960Z", b"250926153046"]


def random_primitive(rng: random.Random) -> bytes:
    choice = rng.randrange(14)
    if choice == 0:
        return universal(1, rng.choice([b"\x00", b"\xff", b"\xff", b"\x01", b"", b"\x00\x00"]))
    if choice in (1, 2):
        contents = integer_contents(rng.choice([0, 1, -1, 127, 128, -128, -129, 255, 2**63 - 1, -2**63, 2**64, 709]))
        if rng.random() < 0.1:
            contents = rng.choice([b"", b"\x00" + contents, b"\xff\x80", b"\x00\x7f"])
        return universal(rng.choice([2, 2, 10]), contents)
    if choice == 3:
        return universal(5, rng.choice([b"", b"", b"\x00"]))
    if choice == 4:
        return universal(6, rng.choice(OIDS))
    if choice in (5, 6):
        return universal(4, rng.randbytes(rng.choice([0, 1, 4, 32])))
    if choice == 7:
        unused = rng.choice([0, 0, 0, 1, 7, 8])
        body = rng.randbytes(rng.choice([0, 1, 3]))
        return universal(3, bytes([unused]) + body)
    if choice == 8:
        return universal(rng.choice([12, 19, 22, 30, 20, 26]), rng.choice(TEXTS))
    if choice == 9:
        return universal(rng.choice([23, 24]), rng.choice(TIMES))
    if choice == 10:
        # tags pyasn1 has no type for without a schema, and the reserved universal 0
        number = rng.choice([0, 8, 11, 13, 14, 15, 29, 31, 709])
        return tlv(identifier(rng.choice([0, 1, 2, 3]), False, number), rng.randbytes(rng.choice([0, 2])))
    if choice == 11:
        return universal(9, rng.choice([b"", b"\x40", b"\x41", b"\x80\x00\x01", b"\x03" + b"1.5"]))
    if choice == 12:
        return tlv(identifier(2, False, rng.choice([0, 1, 2, 6])), rng.randbytes(rng.choice([1, 4])))
    return universal(rng.choice([4, 12, 3]), universal(4, b"ab") + universal(4, b"c"), True)


def random_element(rng: random.Random, depth: int) -> bytes:
    if depth >= 4 or rng.random() < 0.55:
        element = random_primitive(rng)
    else:
        children = [random_element(rng, depth + 1) for _ in range(rng.choice([0, 1, 1, 2, 3, 4]))]
        choice = rng.random()
        if choice < 0.45:
            element = sequence(*children)
        elif choice < 0.65:
            element = der_set(*children, sort=rng.random() < 0.7)
        elif choice < 0.95:
            number = rng.choice([0, 1, 3, 30, 31, 127, 128, 704, 709, 2**28 - 1])
            element = tlv(identifier(2, True, number), children[0] if children and rng.random() < 0.9
                          else b"".join(children))
        else:
            element = tlv(identifier(rng.choice([1, 3]), True, rng.randrange(40)), b"".join(children))
    if rng.random() < 0.06:
        element = bend_header(rng, element)
    return element


def bend_header(rng: random.Random, element: bytes) -> bytes:
    parsed = parse(element)
    if not parsed:
        return element
    ident, body, constructed = parsed[0]
    contents = serialize(body) if constructed else body
    choice = rng.randrange(6)
    if choice == 0:
        return tlv(ident, contents, "padded")
    if choice == 1:
        return tlv(ident, contents, "indefinite")
    if choice == 2 and ident[0] & 0x1F != 0x1F:
        return tlv(identifier(ident[0] >> 6, bool(ident[0] & 0x20), ident[0] & 0x1F, True), contents)
    if choice == 3 and ident[0] & 0x1F == 0x1F:
        return ident[:1] + b"\x80" + ident[1:] + length_octets(len(contents)) + contents
    if choice == 4 and len(contents) < 128:
        return ident + b"\x81" + bytes([len(contents)]) + contents
    return bytes([ident[0] ^ 0x20]) + element[len(ident[:1]):]


def authorization(rng: random.Random, number: int, valid: bool = True) -> bytes:
    kind = AUTHORIZATIONS.get(number, univ.Integer)
    if kind is IntegerSet:
        value = der_set(*[universal(2, integer_contents(rng.choice([0, 2, 3, 7]))) for _ in range(rng.choice([1, 1, 2]))],
                        sort=valid or rng.random() < 0.5)
    elif kind is univ.Null:
        value = universal(5, b"")
    elif kind is univ.OctetString:
        value = universal(4, application_id(rng, valid) if number == 709 else rng.randbytes(rng.choice([0, 8, 32])))
    elif kind is RootOfTrust:
        fields = [universal(4, rng.randbytes(32)), universal(1, rng.choice([b"\xff", b"\x00"])),
                  universal(10, integer_contents(rng.choice([0, 1, 2, 3])))]
        if rng.random() < 0.8:
            fields.append(universal(4, rng.randbytes(32)))
        if not valid:
            fields = bend_list(rng, fields, [universal(10, b"\x04"), universal(1, b"\x01"), universal(2, b"\x00"),
                                             universal(4, b"")])
        value = sequence(*fields)
    else:
        value = universal(2, integer_contents(rng.choice([0, 1, 2, 3, 4, 256, 2**31, 20250101, 2**63, -1])))
    if not valid and rng.random() < 0.4:
        value = rng.choice([universal(2, b"\x01"), universal(5, b""), universal(4, b""), sequence(), der_set(),
                            value + universal(5, b"")])
    return context(number, value)


def application_id(rng: random.Random, valid: bool) -> bytes:
    packages = [sequence(universal(4, rng.choice([b"com.google.android.attestation", b"a", b"", b"\xff"])),
                         universal(2, integer_contents(rng.choice([0, 1, 34, 2**40]))))
                for _ in range(rng.choice([1, 1, 2, 0]))]
    digests = [universal(4, rng.randbytes(rng.choice([32, 32, 20, 0]))) for _ in range(rng.choice([1, 1, 2, 0]))]
    parts = [der_set(*packages, sort=valid or rng.random() < 0.5), der_set(*digests, sort=valid or rng.random() < 0.5)]
    if not valid:
        parts = bend_list(rng, parts, [der_set(universal(4, b"x")), sequence(), universal(4, b"")])
    encoded = sequence(*parts)
    if not valid and rng.random() < 0.3:
        encoded = bend_bytes(rng, encoded)
    return encoded


def authorization_list(rng: random.Random, valid: bool) -> bytes:
    numbers = sorted(rng.sample(sorted(AUTHORIZATIONS), rng.choice([0, 1, 3, 6, 10])))
    if rng.random() < 0.5:
        numbers = sorted(set(numbers) | {rng.choice([1, 2, 10, 702, 704, 709])})
    entries = [authorization(rng, number, valid or rng.random() < 0.7) for number in numbers]
    if not valid:
        entries = bend_list(rng, entries, [context(rng.choice([9, 11, 730, 1000]), universal(2, b"\x01")),
                                           context(1, universal(2, b"\x02")), universal(2, b"\x01"),
                                           tlv(identifier(2, False, 5), b"\x01")])
    return sequence(*entries)


def key_description(rng: random.Random) -> bytes:
    valid = rng.random() < 0.5
    fields = [
        universal(2, integer_contents(rng.choice([3, 4, 100, 200, 300, 400]))),
        universal(10, integer_contents(rng.choice([0, 1, 2]))),
        universal(2, integer_contents(rng.choice([4, 41, 100, 200, 300, 400]))),
        universal(10, integer_contents(rng.choice([0, 1, 2]))),
        universal(4, rng.randbytes(rng.choice([0, 16, 32, 36]))),
        universal(4, rng.randbytes(rng.choice([0, 0, 16]))),
        authorization_list(rng, valid or rng.random() < 0.5),
        authorization_list(rng, valid or rng.random() < 0.5),
    ]
    if not valid:
        fields = bend_list(rng, fields, [universal(10, b"\x03"), universal(10, b"\xff"), universal(2, b"\x01" * 9),
                                         universal(2, b"\x01"), universal(4, b""), sequence(), universal(5, b"")])
    return sequence(*fields)


def bend_list(rng: random.Random, items: list, replacements: list) -> list:
    items = list(items)
    choice = rng.randrange(5)
    position = rng.randrange(len(items) + 1)
    if choice == 0 and items:
        del items[min(position, len(items) - 1)]
    elif choice == 1:
        items.insert(position, rng.choice(replacements))
    elif choice == 2 and items:
        items[min(position, len(items) - 1)] = rng.choice(replacements)
    elif choice == 3 and len(items) > 1:
        first, second = rng.sample(range(len(items)), 2)
        items[first], items[second] = items[second], items[first]
    elif items:
        items.insert(position, rng.choice(items))
    return items


def bend_bytes(rng: random.Random, data: bytes) -> bytes:
    position = rng.randrange(len(data) + 1)
    choice = rng.randrange(4)
    if choice == 0:
        return data[:position]
    if choice == 1 and position < len(data):
        return data[:position] + bytes([data[position] ^ (1 << rng.randrange(8))]) + data[position + 1:]
    if choice == 2:
        return data[:position] + bytes([rng.randrange(256)]) + data[position:]
    return data + rng.choice([b"\x00", b"\x00\x00", b"\x05\x00", b"\x30\x00"])


def bend_element(rng: random.Random, data: bytes) -> bytes:
    """A real certificate or KeyDescription with one element changed and every length rewritten."""
    elements = parse(data)
    if elements is None:
        return bend_bytes(rng, data)
    siblings, index = rng.choice(list(every_element(elements)))
    ident, body, constructed = siblings[index]
    choice = rng.randrange(8)
    if choice == 0:
        del siblings[index]
    elif choice == 1:
        siblings.insert(index, siblings[index])
    elif choice == 2 and index + 1 < len(siblings):
        siblings[index], siblings[index + 1] = siblings[index + 1], siblings[index]
    elif choice == 3 and not constructed:
        siblings[index] = [ident, bend_bytes(rng, body) if body else b"\x00", False]
    elif choice == 4:
        replacement = parse(random_element(rng, 2))
        if replacement:
            siblings[index] = replacement[0]
    elif choice == 5:
        new_ident = bytes([ident[0] ^ rng.choice([0x20, 0x80, 0x40, 0x01, 0x02])]) + ident[1:]
        siblings[index] = [new_ident, serialize(body) if constructed else body, False]
    elif choice == 6 and not constructed and ident == b"\x04":
        siblings[index] = [ident, key_description(rng), False]
    else:
        encoded = serialize([siblings[index]])
        siblings[index] = [b"", bend_header(rng, encoded), False]
        return b"".join(serialize_raw(elements))
    return serialize(elements)


def serialize_raw(elements):
    """serialize(), except that an element with an empty identifier is written as its raw bytes."""
    for ident, body, constructed in elements:
        if not ident:
            yield body
        else:
            inner = b"".join(serialize_raw(body)) if constructed else body
            yield tlv(ident, inner)


def generate(rng: random.Random) -> bytes:
    choice = rng.random()
    if choice < 0.45:
        data = random_element(rng, 1)
        if rng.random() < 0.05:
            data = bend_bytes(rng, data)
        return data
    if choice < 0.75:
        data = key_description(rng) if rng.random() < 0.7 else rng.choice(KEY_DESCRIPTIONS)
        return bend_element(rng, data) if rng.random() < 0.5 else data
    data = rng.choice(CERTIFICATES)
    if rng.random() < 0.1:
        return data
    return bend_element(rng, data) if rng.random() < 0.8 else bend_bytes(rng, data)


# ---------------------------------------------------------------------------------------------------
# The references.

class Refused(Exception):
    pass


def strip_header(encoded: bytes) -> bytes:
    """The contents of one definite-length TLV written by pyasn1."""
    position = 1
    if encoded[0] & 0x1F == 0x1F:
        while encoded[position] & 0x80:
            position += 1
        position += 1
    length = encoded[position]
    position += 1 + (length & 0x7F if length & 0x80 else 0)
    return encoded[position:]


def tree_of(value, depth: int):
    """The gateway's tree form (DERVerdict) of a value pyasn1 decoded without a schema."""
    tags = value.tagSet.superTags
    if depth + len(tags) - 1 > MAXIMUM_DEPTH:
        raise Refused("too deep")
    base = tags[0]
    if base.tagFormat == tag.tagFormatConstructed:
        node = {"t": f"0.c.{base.tagId}",
                "e": [tree_of(value[index], depth + len(tags)) for index in range(len(value))]}
    else:
        contents = der_encoder.encode(value)
        for _ in tags:
            contents = strip_header(contents)
        node = {"t": f"0.p.{base.tagId}", "x": contents.hex()}
        if isinstance(value, univ.ObjectIdentifier):
            node["oid"] = ".".join(str(arc) for arc in value.asTuple())
    for outer in tags[1:]:
        node = {"t": f"{outer.tagClass >> 6}.c.{outer.tagId}", "e": [node]}
    return node


def reference_tree(data: bytes):
    """The tree pyasn1 reads, or raises Refused with pyasn1's reason."""
    if len(data) > MAXIMUM_BYTES:
        raise Refused("over 8192 bytes")
    try:
        value, rest = der_decoder.decode(data)
        if rest:
            raise Refused("trailing bytes")
        written = der_encoder.encode(value)
        if written != data:
            refusal = Refused("not the encoding pyasn1 writes")
            refusal.written = written
            raise refusal
        return tree_of(value, 1)
    except (PyAsn1Error, AttributeError, TypeError, ValueError, IndexError, KeyError, RecursionError) as error:
        raise Refused(type(error).__name__ + ": " + str(error)[:60]) from error


def only_set_order_differs(data: bytes, refusal: Refused) -> bool:
    """Whether pyasn1 wrote the input back with only the elements of a SET in another order (it sorts by
    tag, then by encoding; the strict reader does not check the order)."""
    written = getattr(refusal, "written", None)
    return written is not None and sorted_sets(written) == sorted_sets(data)


# Universal tag numbers pyasn1 decodes without a schema.
PYASN1_UNIVERSAL = {1, 2, 3, 4, 5, 6, 9, 10, 12, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 30}
STRINGS = {12: "utf-8", 18: "ascii", 19: "ascii", 20: "ascii", 21: "ascii", 22: "ascii", 25: "ascii", 26: "ascii",
           27: "ascii", 28: "utf-32-be", 30: "utf-16-be"}


def pyasn1_limit(node) -> str:
    """The first construct in the gateway's tree that pyasn1 cannot decode without a schema (or that its
    types refuse, or its DER encoder writes otherwise although X.690 §10–11 allows it), else ""."""
    tag_class, form, number = node["t"].split(".")
    tag_class, number = int(tag_class), int(number)
    if tag_class != 0:
        if form == "p":
            return "a primitive element with a non-universal tag"
        if len(node["e"]) != 1:
            return "an explicit tag around no element or several"
    elif number == 0:
        return ""  # end-of-contents, never an element: pyasn1 is right to refuse it
    elif number not in PYASN1_UNIVERSAL:
        return "a universal tag number pyasn1 has no type for"
    elif number in (2, 10) and len(node["x"]) >= 2 and node["x"].strip("0") == "8":
        return "a negative power of two INTEGER, which pyasn1 writes with a redundant ff octet"
    elif form == "c" and not node["e"]:
        return "an empty SEQUENCE or SET"
    elif number in STRINGS:
        try:
            bytes.fromhex(node["x"]).decode(STRINGS[number])
        except UnicodeDecodeError:
            return "string contents that are not of the string type's character set"
    elif number == 9:
        return "a REAL"
    elif number in (23, 24) and not strict_time(bytes.fromhex(node["x"]), 13 if number == 23 else 15):
        return "a time whose text pyasn1's DER writer refuses"
    for child in node.get("e", []):
        limit = pyasn1_limit(child)
        if limit:
            return limit
    return ""


def strict_time(text: bytes, size: int) -> bool:
    """RFC 5280 §4.1.2.5's form: digits then Z (pyasn1 checks the Z and the fraction, not the digits)."""
    return len(text) == size and text.endswith(b"Z") and text[:-1].isdigit()


def sorted_sets(data: bytes) -> bytes:
    """The encoding with the elements of every SET put in the order of their encodings."""
    def canonical(elements):
        for ident, body, constructed in elements:
            if not constructed:
                yield tlv(ident, body)
                continue
            children = list(canonical(body))
            yield tlv(ident, b"".join(sorted(children) if ident == b"\x31" else children))
    elements = parse(data)
    return b"".join(canonical(elements)) if elements is not None else data


def encode_node(node) -> bytes:
    tag_class, form, number = node["t"].split(".")
    ident = identifier(int(tag_class), form == "c", int(number))
    contents = b"".join(encode_node(child) for child in node["e"]) if form == "c" else bytes.fromhex(node["x"])
    return tlv(ident, contents)


def serial_hex(value: int) -> str:
    return ("-" if value < 0 else "") + format(abs(value), "x")


def reference_certificate(data: bytes):
    """The gateway's certificate line as cryptography reads the input, or raises Refused with its reason."""
    try:
        certificate = x509.load_der_x509_certificate(data)
    except x509.InvalidVersion as error:
        raise Refused("an unknown X.509 version") from error
    except ValueError as error:
        raise Refused(refused_field(str(error))) from error
    reading = {"serial": serial_hex(certificate.serial_number),
               "not_before": int(certificate.not_valid_before_utc.timestamp()),
               "not_after": int(certificate.not_valid_after_utc.timestamp())}
    try:
        extension = certificate.extensions.get_extension_for_oid(x509.ObjectIdentifier(KEY_DESCRIPTION_OID))
        reading["key_description"] = extension.value.value.hex()
    except x509.ExtensionNotFound:
        reading["key_description"] = None
    except (ValueError, x509.DuplicateExtension) as error:
        reading["extensions_refused"] = type(error).__name__ + ": " + str(error)[:60]
    return certificate, reading


def refused_field(text: str) -> str:
    """The certificate field a cryptography ParseError names (its location's TbsCertificate member)."""
    if "location: [" not in text:
        return "the certificate"
    location = [part.strip('"') for part in text.split("location: [")[1].split("]")[0].split(", ")]
    if any(part.startswith("AttributeType") for part in location):
        return "the issuer or subject name"
    if location[0].startswith(("SubjectPublicKeyInfo::", "AlgorithmIdentifier::")):
        # cryptography parses the SubjectPublicKeyInfo a second time, on its own, at load: its
        # locations start there, not at Certificate::.
        return "the SubjectPublicKeyInfo"
    fields = [part.split("::")[1] for part in location if part.startswith("TbsCertificate::")]
    if fields:
        return {"issuer": "the issuer or subject name", "subject": "the issuer or subject name", "spki": "the SubjectPublicKeyInfo",
                "validity": "the validity", "raw_extensions": "the extensions", "signature_alg": "the algorithm",
                "serial": "the serial number", "version": "the version"}.get(fields[0], fields[0])
    return {"Certificate::signature_alg": "the algorithm", "Certificate::signature": "the signature"}.get(
        location[0], location[0])


def reference_key_description(data: bytes):
    """The gateway's key_description line as the schema reads the input, or raises Refused."""
    try:
        value, rest = der_decoder.decode(data, asn1Spec=KeyDescription())
        if rest or der_encoder.encode(value) != data:
            raise Refused("not DER")
        levels = [int(value["attestationSecurityLevel"]), int(value["keyMintSecurityLevel"])]
        if any(level not in (0, 1, 2) for level in levels):
            raise Refused("a security level outside Android's enumeration")
        line = {"attestation_version": int(value["attestationVersion"]), "attestation_security_level": levels[0],
                "keymint_version": int(value["keyMintVersion"]), "keymint_security_level": levels[1],
                "challenge": bytes(value["attestationChallenge"]).hex(), "unique_id": bytes(value["uniqueId"]).hex(),
                "software": authorizations(value["softwareEnforced"]),
                "hardware": authorizations(value["hardwareEnforced"])}
        for number in (line["attestation_version"], line["keymint_version"]):
            if not -2**63 <= number < 2**63:
                raise Refused("an INTEGER beyond 64 bits")
        return line
    except (PyAsn1Error, AttributeError, TypeError, ValueError, IndexError, KeyError, RecursionError) as error:
        raise Refused(type(error).__name__ + ": " + str(error)[:60]) from error


def authorizations(value) -> dict:
    def integer(number: int):
        item = value[f"tag{number}"]
        if not item.isValue:
            return None
        if not -2**63 <= int(item) < 2**63:
            raise Refused("an INTEGER beyond 64 bits")
        return int(item)

    tags = [number for number in AUTHORIZATIONS if value[f"tag{number}"].isValue]
    purposes = [int(member) for member in value["tag1"]] if value["tag1"].isValue else None
    if purposes and any(not -2**63 <= member < 2**63 for member in purposes):
        raise Refused("an INTEGER beyond 64 bits")
    line = {"tags": tags, "purposes": purposes, "algorithm": integer(2), "ec_curve": integer(10),
            "origin": integer(702), "root_of_trust": None, "application_id": None}
    root = value["tag704"]
    if root.isValue:
        state = int(root["verifiedBootState"])
        if state not in (0, 1, 2, 3):
            raise Refused("a verified boot state outside Android's enumeration")
        line["root_of_trust"] = {"key": bytes(root["verifiedBootKey"]).hex(), "locked": bool(root["deviceLocked"]),
                                 "state": state,
                                 "hash": bytes(root["verifiedBootHash"]).hex() if root["verifiedBootHash"].isValue
                                 else None}
    if value["tag709"].isValue:
        encoded = bytes(value["tag709"])
        if len(encoded) > MAXIMUM_BYTES:
            raise Refused("over 8192 bytes")
        application, rest = der_decoder.decode(encoded, asn1Spec=AttestationApplicationId())
        if rest or der_encoder.encode(application) != encoded:
            raise Refused("attestationApplicationId not DER")
        packages = []
        for package in application["packageInfos"]:
            if not -2**63 <= int(package["version"]) < 2**63:
                raise Refused("an INTEGER beyond 64 bits")
            packages.append([bytes(package["packageName"]).hex(), int(package["version"])])
        line["application_id"] = {"packages": packages,
                                  "digests": [bytes(digest).hex() for digest in application["signatureDigests"]]}
    return line


def has_large_tag_number(node) -> bool:
    """A tag number of 2^28 or more: its high-tag-number form needs more than the four subsequent
    octets the strict reader takes (DERError.unsupportedTag)."""
    return int(node["t"].split(".")[2]) >= 1 << 28 or any(has_large_tag_number(child) for child in node.get("e", []))


PRIMITIVE_ONLY = {1, 2, 3, 4, 5, 6, 7, 9, 10, 12, 13, 30} | set(range(18, 29))


def has_constructed_string(node) -> bool:
    """A universal type DER encodes only in the primitive form, in the constructed form: pyasn1 decodes an
    empty one and writes it back constructed, so its round trip passes."""
    tag_class, form, number = node["t"].split(".")
    if tag_class == "0" and form == "c" and int(number) in PRIMITIVE_ONLY:
        return True
    return any(has_constructed_string(child) for child in node.get("e", []))


def has_non_minimal_negative(node) -> bool:
    """An INTEGER or ENUMERATED whose first nine bits are ones (X.690 §8.3.2 forbids it): pyasn1 0.6.3's DER
    encoder writes -2^(8k-1) so (-128 as ff 80), so its round trip cannot catch it."""
    if node["t"] in ("0.p.2", "0.p.10"):
        contents = bytes.fromhex(node["x"])
        return len(contents) > 1 and contents[0] == 0xFF and contents[1] >= 0x80
    return any(has_non_minimal_negative(child) for child in node.get("e", []))


def without_unread_identifiers(node, expected):
    """The gateway's tree with the dotted form of every OBJECT IDENTIFIER it did not read taken from
    `expected` (where the shapes agree)."""
    if "e" in node and "e" in expected and len(node["e"]) == len(expected["e"]):
        return dict(node, e=[without_unread_identifiers(child, other) for child, other in zip(node["e"], expected["e"])])
    if node.get("oid", "") is None and "oid" in expected:
        return dict(node, oid=expected["oid"])
    return node


def explicit_false_criticality(tree) -> bool:
    """An extension with `critical` present and FALSE: DER omits a DEFAULT value (X.690 §11.5)."""
    extensions = [field for field in tree["e"][0]["e"][7:] if field["t"] == "2.c.3"]
    return any(len(entry["e"]) == 3 and entry["e"][1] == {"t": "0.p.1", "x": "00"}
               for entry in (extensions[0]["e"][0]["e"] if extensions else []))


READ_TAGS = {1, 2, 10, 702, 704, 709}


def unread_authorization(line, data: bytes) -> str:
    """What in an authorization list the gateway keeps uninterpreted and Android's schema refuses: a tag
    the schema does not list, or a value of another type under a tag the gateway does not read."""
    for list_name in ("software", "hardware"):
        if any(number not in AUTHORIZATIONS for number in line[list_name]["tags"]):
            return "an authorization tag Android's schema does not list"
    elements = parse(data)
    for list_element in (elements[0][1][6], elements[0][1][7]):
        for ident, body, _ in list_element[1]:
            number = int(node_number(ident))
            if number in READ_TAGS:
                continue
            try:
                value, rest = der_decoder.decode(serialize(body), asn1Spec=AUTHORIZATIONS[number]())
                if rest or der_encoder.encode(value) != serialize(body):
                    raise Refused("not DER")
            except (PyAsn1Error, Refused, ValueError, TypeError):
                return "a value of another type under an authorization the gateway does not read"
    return ""


def node_number(ident: bytes) -> int:
    if ident[0] & 0x1F != 0x1F:
        return ident[0] & 0x1F
    number = 0
    for digit in ident[1:]:
        number = number << 7 | digit & 0x7F
    return number


def gateway_rule_refusing_certificate(certificate, tree) -> str:
    """The rule of AttestationCertificate (docs/protocol.md §5a step 1) that refuses a certificate
    cryptography reads, found on the element tree; "" when none applies."""
    if certificate.version != x509.Version.v3:
        return "only X.509 v3"
    tbs, outer, signature = tree["e"]
    if not signature["x"].startswith("00"):
        return "a signature BIT STRING of whole octets"
    fields = tbs["e"]
    if encode_node(fields[2]) != encode_node(outer):
        return "the signed and the outer signature algorithms are the same (RFC 5280 §4.1.1.2)"
    for time in fields[4]["e"]:
        text = bytes.fromhex(time["x"])
        size = 13 if time["t"] == "0.p.23" else 15
        if not strict_time(text, size) or not real_date(text[:-1].decode(), size == 13):
            return "times as RFC 5280 §4.1.2.5 writes them (YYMMDDHHMMSSZ, YYYYMMDDHHMMSSZ), real dates"
    extensions = [field for field in fields[7:] if field["t"] == "2.c.3"]
    if extensions:
        oids = [entry["e"][0].get("oid") for entry in extensions[0]["e"][0]["e"]]
        if len(set(oids)) != len(oids):
            return "no extension twice (RFC 5280 §4.2)"
    return ""


def real_date(digits: str, two_digit_year: bool) -> bool:
    try:
        year = int(digits[:2]) + (1900 if int(digits[:2]) >= 50 else 2000) if two_digit_year else int(digits[:4])
        rest = digits[2:] if two_digit_year else digits[4:]
        datetime.datetime(year, int(rest[0:2]), int(rest[2:4]), int(rest[4:6]), int(rest[6:8]), int(rest[8:10]))
        return True
    except ValueError:
        return False


# Generated inputs repeat (small TLVs, unchanged corpus items): each distinct input and verdict line is
# judged once; the references are deterministic.
JUDGED = {}


def judge(data: bytes, gateway_line: dict):
    key = (data, json.dumps(gateway_line, sort_keys=True))
    if key not in JUDGED:
        if len(JUDGED) > 200_000:
            JUDGED.clear()
        JUDGED[key] = judge_once(data, gateway_line)
    return JUDGED[key]


def judge_once(data: bytes, gateway_line: dict):
    try:
        tree = reference_tree(data)
        refusal = ""
    except Refused as error:
        tree, refusal = None, str(error)
        if gateway_line["verdict"] == "accept" and only_set_order_differs(data, error):
            return "gateway accepts a SET whose elements are not in the order pyasn1 writes; pyasn1 refuses", False
    if gateway_line["verdict"] != "accept":
        if tree is not None:
            if has_large_tag_number(tree):
                return "gateway refuses a tag number beyond four octets; pyasn1 reads it", False
            if has_constructed_string(tree):
                return "gateway refuses a constructed string (X.690 §10.2); pyasn1 writes back the form it read", False
            if has_non_minimal_negative(tree):
                return "gateway refuses a negative INTEGER with nine leading one bits; pyasn1 writes it", False
            return f"gateway refuses ({gateway_line['code']}); pyasn1 reads the element", True
        return None
    if tree is None:
        limit = pyasn1_limit(gateway_line["tree"])
        if limit:
            return f"gateway accepts {limit}; pyasn1 refuses", False
        return f"gateway accepts what pyasn1 refuses ({refusal})", True
    if tree != gateway_line["tree"]:
        if tree == without_unread_identifiers(gateway_line["tree"], tree):
            return "gateway does not read an OBJECT IDENTIFIER arc beyond 64 bits", False
        return "gateway reads another tree than pyasn1", True
    return judge_certificate(data, gateway_line, tree) or judge_key_description(data, gateway_line)


def judge_certificate(data: bytes, gateway_line: dict, tree):
    try:
        certificate, reading = reference_certificate(data)
    except Refused as error:
        if gateway_line["certificate"] is None:
            return None
        if str(error) == "the extensions" and explicit_false_criticality(tree):
            return "gateway reads an extension whose criticality FALSE is written out; cryptography refuses it", False
        return f"gateway reads a certificate cryptography refuses in {error}", False
    if gateway_line["certificate"] is None:
        rule = gateway_rule_refusing_certificate(certificate, tree)
        if rule:
            return f"gateway refuses a certificate cryptography reads: {rule}", False
        return "gateway refuses a certificate cryptography reads", False
    line = dict(gateway_line["certificate"])
    spki = line.pop("spki")
    if spki != encode_node(tree["e"][0]["e"][6]).hex():
        return "gateway reads another SubjectPublicKeyInfo", True
    if "extensions_refused" in reading:
        if explicit_false_criticality(tree):
            return "gateway reads an extension whose criticality FALSE is written out; cryptography refuses it", False
        return "gateway reads a certificate with an extension value cryptography refuses", False
    if line != reading:
        return "gateway reads a certificate differently from cryptography", True
    return None


def judge_key_description(data: bytes, gateway_line: dict):
    try:
        expected = reference_key_description(data)
    except Refused as error:
        if gateway_line["key_description"] is not None:
            unread = unread_authorization(gateway_line["key_description"], data)
            if unread:
                return f"gateway reads a KeyDescription with {unread}; the schema refuses it", False
            return f"gateway reads a KeyDescription the schema refuses: {error}", True
        return None
    if gateway_line["key_description"] is None:
        return "gateway refuses a KeyDescription the schema reads", True
    if gateway_line["key_description"] != expected:
        return "gateway reads a KeyDescription differently from the schema", True
    return None
