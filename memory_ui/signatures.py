"""Ed25519 signatures over JSON documents (erasure receipts), with the keys from the
settings: `PORTAL_RECEIPT_SIGNING_KEY` signs, and its public key plus those in
`PORTAL_RECEIPT_VERIFY_KEYS` (earlier keys, kept after a rotation) verify.

A signed document is one line of canonical JSON (sorted keys, no spaces, UTF-8):
`{"document": {..., "key_id": ...}, "signature": "<base64>"}`, the signature made over the
canonical bytes of `document`. Verification takes the file's bytes exactly: a file that is
not in that one canonical form is refused as well, so any changed byte fails."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    PublicFormat,
    load_pem_private_key,
    load_pem_public_key,
)
from django.conf import settings

PUBLIC_PEM = re.compile(r"-----BEGIN PUBLIC KEY-----.+?-----END PUBLIC KEY-----", re.DOTALL)


class BadSignature(Exception):
    """The document is not one these keys signed, unchanged; the message says why."""


def canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def key_id(public: Ed25519PublicKey) -> str:
    """A key's name in documents: the start of the sha256 of its raw public bytes."""
    raw = public.public_bytes(Encoding.Raw, PublicFormat.Raw)
    return "ed25519:" + hashlib.sha256(raw).hexdigest()[:16]


def private_key(pem: str) -> Ed25519PrivateKey:
    """The Ed25519 key in `pem` (PKCS#8); ValueError for anything else."""
    key = load_pem_private_key(pem.encode(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError("not an Ed25519 private key")
    return key


def public_keys(pems: str) -> list[Ed25519PublicKey]:
    """Every public key in `pems` (PEM blocks one after another); ValueError for a block
    that is not an Ed25519 public key."""
    keys = []
    for block in PUBLIC_PEM.findall(pems):
        key = load_pem_public_key(block.encode())
        if not isinstance(key, Ed25519PublicKey):
            raise ValueError("not an Ed25519 public key")
        keys.append(key)
    return keys


def _signing_key() -> Ed25519PrivateKey:
    return private_key(settings.PORTAL_RECEIPT_SIGNING_KEY)


def signing_key_id() -> str:
    return key_id(_signing_key().public_key())


def verification_keys() -> dict[str, Ed25519PublicKey]:
    """Key id -> public key: the signing key's, then the earlier ones configured."""
    keys = [_signing_key().public_key(), *public_keys(settings.PORTAL_RECEIPT_VERIFY_KEYS)]
    return {key_id(key): key for key in keys}


def signed(document: dict[str, Any]) -> bytes:
    """`document` with the signing key's id, signed: the bytes to store and hand out."""
    signing = _signing_key()
    document = {**document, "key_id": signing_key_id()}
    signature = base64.b64encode(signing.sign(canonical(document))).decode()
    return canonical({"document": document, "signature": signature})


def verified(data: bytes) -> tuple[dict[str, Any], str]:
    """The document in `data` and the id of the key that signed it; `BadSignature` when
    these keys did not sign exactly these bytes."""
    try:
        parsed = json.loads(data)
        document, signature = (
            parsed["document"],
            base64.b64decode(parsed["signature"], validate=True),
        )
        keyed = document["key_id"]
    except (ValueError, TypeError, KeyError, binascii.Error) as exc:
        raise BadSignature("This is not a signed receipt (its JSON is malformed).") from exc
    if canonical(parsed) != data:
        raise BadSignature("The file was changed: it is not byte for byte as it was signed.")
    key = verification_keys().get(keyed)
    if key is None:
        raise BadSignature(f"It names a key this portal does not know ({keyed}).")
    try:
        key.verify(signature, canonical(document))
    except InvalidSignature as exc:
        raise BadSignature(f"The signature does not match (key {keyed}): it was changed.") from exc
    return document, keyed
