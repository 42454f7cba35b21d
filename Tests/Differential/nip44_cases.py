"""Payloads for the NIP-44 differential, and a reference written from the NIP-44 v2 specification.

Each input is a 32-byte conversation key followed by a payload (UTF-8 text). The gateway opens it with
`NIP44.decrypt` (docs/protocol.md §13). The reference follows the specification's decryption steps
with `cryptography`'s HKDF-Expand, ChaCha20 (counter 0) and HMAC-SHA256: a payload starting with
`#` is an unknown version; under 132 characters is too short; RFC 4648 standard base64 with padding
(Python's `base64.b64decode(validate=True)`); at least 99 decoded bytes; version byte 2; the MAC over
nonce ‖ ciphertext; then the padding rule of NIP-44's 2026-06-28 revision, which docs/protocol.md §13
requires the gateway to accept: a leading u16 length that is not 0 is the plaintext length (2-byte
prefix); a leading u16 of 0 selects the 6-byte prefix `00 00 ‖ u32 BE`, whose length must be at least
65,536; the padded size must then be exactly prefix + calc_padded_len(length). With plaintexts up to
2^32 - 1 bytes the revision has no payload-size ceiling (the original 65,535-byte plaintext and
87,472-character payload bounds go).

nostr-sdk (`nostr_sdk.nip44_decrypt`, which predates the revision) gives a second opinion on inputs
under one fixed key pair's conversation key whose plaintext, if any, uses the 2-byte prefix.
"""

import base64
import binascii
import hashlib
import hmac as stdlib_hmac
import random

import coincurve
import nostr_sdk
from cryptography.hazmat.primitives import hashes, hmac
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand

# nostr-sdk's fixed pair: the gateway side's secret key and the sender's public key.
SDK_SECRET, SDK_SENDER_SECRET = bytes([0x11] * 32), bytes([0x22] * 32)


def conversation_key(secret: bytes, public_x: bytes) -> bytes:
    """HKDF-Extract(salt "nip44-v2", ECDH x): HMAC-SHA256 keyed with the salt."""
    shared = coincurve.PublicKey(b"\x02" + public_x).multiply(secret).format(compressed=True)[1:]
    return stdlib_hmac.new(b"nip44-v2", shared, hashlib.sha256).digest()


SDK_KEY = conversation_key(SDK_SECRET, coincurve.PrivateKey(SDK_SENDER_SECRET).public_key.format()[1:])
SDK_SECRET_KEY = nostr_sdk.SecretKey.parse(SDK_SECRET.hex())
SDK_SENDER = nostr_sdk.Keys(nostr_sdk.SecretKey.parse(SDK_SENDER_SECRET.hex())).public_key()


class Refused(Exception):
    pass


def calc_padded_len(unpadded_len: int) -> int:
    """NIP-44's calc_padded_len: 32 up to 32 bytes, else chunks of max(32, next power of two / 8)."""
    if unpadded_len <= 32:
        return 32
    next_power = 1 << (unpadded_len - 1).bit_length()
    chunk = 32 if next_power <= 256 else next_power // 8
    return chunk * ((unpadded_len - 1) // chunk + 1)


def message_keys(key: bytes, nonce: bytes):
    keys = HKDFExpand(algorithm=hashes.SHA256(), length=76, info=nonce).derive(key)
    return keys[0:32], keys[32:44], keys[44:76]


def chacha20(key: bytes, nonce: bytes, data: bytes) -> bytes:
    # cryptography's ChaCha20 nonce is the 32-bit little-endian counter (0) then the 96-bit nonce.
    return Cipher(algorithms.ChaCha20(key, b"\x00" * 4 + nonce), mode=None).encryptor().update(data)


def mac(key: bytes, data: bytes) -> bytes:
    signer = hmac.HMAC(key, hashes.SHA256())
    signer.update(data)
    return signer.finalize()


def seal(key: bytes, nonce: bytes, padded: bytes, version: int = 2) -> bytes:
    """The decoded payload of `padded` (any bytes) under `key`, with a valid MAC."""
    chacha_key, chacha_nonce, hmac_key = message_keys(key, nonce)
    ciphertext = chacha20(chacha_key, chacha_nonce, padded)
    return bytes([version]) + nonce + ciphertext + mac(hmac_key, nonce + ciphertext)


def pad(plaintext: bytes) -> bytes:
    length = len(plaintext)
    prefix = length.to_bytes(2, "big") if length < 65536 else b"\x00\x00" + length.to_bytes(4, "big")
    return prefix + plaintext + bytes(calc_padded_len(length) - length)


def unpad(padded: bytes) -> bytes:
    length = int.from_bytes(padded[0:2], "big")
    prefix = 2
    if length == 0:
        if len(padded) < 6:
            raise Refused("invalid padding")
        length, prefix = int.from_bytes(padded[2:6], "big"), 6
        if length < 65536:
            raise Refused("invalid padding")
    if len(padded) != prefix + calc_padded_len(length):
        raise Refused("invalid padding")
    return padded[prefix:prefix + length]


def decrypt(payload: str, key: bytes) -> bytes:
    if payload[:1] == "#":
        raise Refused("unknown version")
    if len(payload) < 132:
        raise Refused("invalid payload size")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as error:
        raise Refused("invalid base64") from error
    if len(data) < 99:
        raise Refused("invalid data size")
    if data[0] != 2:
        raise Refused("unknown version")
    nonce, ciphertext, tag = data[1:33], data[33:-32], data[-32:]
    chacha_key, chacha_nonce, hmac_key = message_keys(key, nonce)
    if not stdlib_hmac.compare_digest(mac(hmac_key, nonce + ciphertext), tag):
        raise Refused("invalid MAC")
    return unpad(chacha20(chacha_key, chacha_nonce, ciphertext))


LENGTHS = [1, 2, 31, 32, 33, 64, 65, 100, 255, 256, 257, 320, 1000, 1024, 1025, 4096, 8192, 34688, 65535]


def plaintext_length(rng: random.Random) -> int:
    choice = rng.random()
    if choice < 0.003:
        return rng.choice([65536, 65537, 70000, 81921])
    if choice < 0.5:
        return rng.choice(LENGTHS[:-2])
    if choice < 0.52:
        return rng.choice(LENGTHS[-2:])
    return rng.randint(1, 600)


def crafted_padded(rng: random.Random) -> bytes:
    """Padded plaintexts that break (or test the edges of) the prefix and padding rules."""
    length = plaintext_length(rng)
    padded = bytearray(pad(rng.randbytes(length)))
    prefix = 2 if length < 65536 else 6
    action = rng.randrange(8)
    if action == 0:
        padded[0:2] = rng.choice([0, 1, 31, 32, 33, 65535]).to_bytes(2, "big")
    elif action == 1:
        padded[0:6] = b"\x00\x00" + rng.choice([0, 1, 32, 65535, 65536, 65537, 2**32 - 1]).to_bytes(4, "big")
    elif action == 2:
        padded += bytes(rng.choice([1, 31, 32, 64]))
    elif action == 3:
        del padded[len(padded) - rng.choice([1, 16, 32]):]
    elif action == 4 and len(padded) > prefix + length:
        padded[-1] = rng.randrange(1, 256)
    elif action == 5:
        padded[0:2] = (int.from_bytes(padded[0:2], "big") + rng.choice([-1, 1])).to_bytes(2, "big", signed=False) \
            if 0 < int.from_bytes(padded[0:2], "big") < 65535 else padded[0:2]
    elif action == 6:
        padded = bytearray(rng.randbytes(rng.choice([34, 35, 36, 38, 64, 66, 98])))
    else:
        padded[0:2] = b"\x00\x00"
    return bytes(padded)


def generate(rng: random.Random) -> bytes:
    key = SDK_KEY if rng.random() < 0.15 else rng.randbytes(32)
    nonce = rng.randbytes(32)
    if rng.random() < 0.6:
        length = plaintext_length(rng)
        plaintext = rng.choice([lambda: rng.randbytes(length), lambda: b"x" * length,
                                lambda: "é".encode() * (length // 2) + b"y" * (length % 2)])()
        decoded = seal(key, nonce, pad(plaintext))
    else:
        decoded = seal(key, nonce, crafted_padded(rng))
    payload = base64.b64encode(decoded).decode()
    if rng.random() < 0.3:
        payload = mutate(rng, key, nonce, decoded, payload)
    return key + payload.encode("utf-8")


def mutate(rng: random.Random, key: bytes, nonce: bytes, decoded: bytes, payload: str) -> str:
    action = rng.randrange(11)
    position = rng.randrange(len(payload))
    if action == 0:
        return payload.rstrip("=")
    if action == 1:
        # the unused low bits of the last symbol set: the same bytes in a non-canonical encoding
        if payload.endswith("=="):
            last = "AEIMQUYcgkosw048"
        elif payload.endswith("="):
            last = "AEIMQUYcgkosw048".replace("A", "B")
        else:
            return payload
        symbol = payload.rstrip("=")[-1]
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        index = alphabet.index(symbol)
        bits = 15 if payload.endswith("==") else 3
        stripped = payload.rstrip("=")
        return stripped[:-1] + alphabet[index | rng.randint(1, bits)] + payload[len(stripped):]
    if action == 2:
        return payload[:position] + rng.choice([" ", "\n", "=", "-", "_", "é", "\u0000", "*"]) + payload[position:]
    if action == 3:
        return payload[:position] + rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") \
            + payload[position + 1:]
    if action == 4:
        return "#" + payload[1:] if rng.random() < 0.5 else "#" + payload
    if action == 5:
        return base64.b64encode(bytes([rng.choice([0, 1, 3, 0x82, 0xff])]) + decoded[1:]).decode()
    if action == 6:
        cut = rng.choice([1, 4, 32, 33, 64])
        return base64.b64encode(decoded[:-cut]).decode()
    if action == 7:
        return payload[:rng.choice([0, 1, 128, 131, 132, 136])]
    if action == 8:
        return base64.urlsafe_b64encode(decoded).decode()
    if action == 9:
        # a short decoded payload that is still 132 characters or more
        return base64.b64encode(seal(key, nonce, rng.randbytes(rng.randint(0, 40)))).decode().ljust(132, "A")
    return payload + rng.choice(["", "=", "A", "AA==", "\n"])


def reference(data: bytes):
    """(plaintext or None, the reason of a refusal, whether the plaintext used the 6-byte prefix)."""
    key, payload = data[:32], data[32:].decode("utf-8")
    try:
        plaintext = decrypt(payload, key)
        return plaintext, None, len(plaintext) >= 65536
    except Refused as refusal:
        return None, str(refusal), False


def second_opinion(payload: str):
    """nostr-sdk's plaintext (UTF-8 text only) or None when it refuses."""
    try:
        return nostr_sdk.nip44_decrypt(SDK_SECRET_KEY, SDK_SENDER, payload).encode("utf-8")
    except Exception:  # nostr-sdk reports every refusal as a generic NostrSdkError
        return None


def canonical_base64(payload: str) -> bool:
    """Whether the payload is the one base64 encoding of its bytes (no stray low bits in the last symbol)."""
    try:
        return base64.b64encode(base64.b64decode(payload, validate=True)).decode() == payload
    except (binascii.Error, ValueError):
        return True


def judge(data: bytes, gateway_line: dict):
    expected, reason, long_form = reference(data)
    accepted = gateway_line["verdict"] == "accept"
    if accepted and expected is None:
        return f"gateway accepts what the reference refuses ({reason})", True
    if accepted and bytes.fromhex(gateway_line["plaintext"]) != expected:
        return "gateway reads another plaintext than the reference", True
    payload = data[32:].decode("utf-8")
    if not accepted and expected is not None:
        if not canonical_base64(payload):
            return "gateway refuses base64 with nonzero unused bits that the reference decodes", False
        return f"gateway {gateway_line['code']}; the reference accepts", True
    if data[:32] != SDK_KEY or long_form:
        return None
    opinion = second_opinion(payload)
    if opinion == expected:
        return None
    if expected is not None:
        try:
            expected.decode("utf-8")
        except UnicodeDecodeError:
            return None  # nostr-sdk hands back text only
        if not canonical_base64(payload):
            return "nostr-sdk refuses base64 with nonzero unused bits, as the gateway does", False
    elif reason == "invalid padding" and opinion is not None:
        return "nostr-sdk reads a padded plaintext the gateway and the reference refuse", True
    return f"nostr-sdk {'accepts' if opinion is not None else 'refuses'}; the gateway and the reference " \
           f"{'accept' if expected is not None else 'refuse'}", True
