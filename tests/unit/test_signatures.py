"""Erasure receipts' signatures (memory_ui/signatures.py) and `manage.py verify_receipt`:
any changed byte fails, the key that signed is named, and earlier keys verify after a
rotation."""

from __future__ import annotations

import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memory_ui.signatures import BadSignature, signed, signing_key_id, verified
from tests.receipt_keys import new_signing_key, public_of

REPO = Path(__file__).resolve().parents[2]
DOCUMENT = {"type": "memory-portal/erasure-receipt", "subject": "alice@contoso.com", "n": 3}


def test_a_signed_document_verifies_and_names_its_key():
    document, key = verified(signed(DOCUMENT))
    assert key == signing_key_id() and key.startswith("ed25519:")
    assert document == {**DOCUMENT, "key_id": key}


def test_changing_any_one_byte_fails():
    data = signed(DOCUMENT)
    for at in range(len(data)):
        changed = data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]
        with pytest.raises(BadSignature):
            verified(changed)


def test_a_reformatted_file_fails():
    data = signed(DOCUMENT)
    with pytest.raises(BadSignature, match="byte for byte"):
        verified(data.replace(b",", b", ", 1))
    with pytest.raises(BadSignature):
        verified(data + b"\n")


def test_an_earlier_key_verifies_only_while_it_is_configured(settings):
    old = new_signing_key()
    settings.PORTAL_RECEIPT_SIGNING_KEY = old
    data, old_id = signed(DOCUMENT), signing_key_id()
    settings.PORTAL_RECEIPT_SIGNING_KEY = new_signing_key()  # rotated
    with pytest.raises(BadSignature, match="does not know"):
        verified(data)
    settings.PORTAL_RECEIPT_VERIFY_KEYS = public_of(new_signing_key()) + public_of(old)
    assert verified(data)[1] == old_id != signing_key_id()


def test_naming_another_known_key_fails(settings):
    settings.PORTAL_RECEIPT_SIGNING_KEY = new_signing_key()
    data, signer = signed(DOCUMENT), signing_key_id()
    settings.PORTAL_RECEIPT_SIGNING_KEY = new_signing_key()
    renamed = data.replace(signer.encode(), signing_key_id().encode())
    with pytest.raises(BadSignature, match="does not match"):
        verified(renamed)


def test_verify_receipt_names_the_key(tmp_path: Path):
    receipt = tmp_path / "receipt.json"
    receipt.write_bytes(signed(DOCUMENT))
    out = StringIO()
    call_command("verify_receipt", str(receipt), stdout=out)
    assert f"valid, signed by {signing_key_id()} (the current signing key)" in out.getvalue()


def test_verify_receipt_refuses_a_changed_receipt_with_a_non_zero_exit(tmp_path: Path):
    receipt = tmp_path / "receipt.json"
    receipt.write_bytes(signed(DOCUMENT).replace(b'"n":3', b'"n":4'))
    with pytest.raises(CommandError, match="NOT VALID"):
        call_command("verify_receipt", str(receipt))
    # As an operator runs it: the exit status says so.
    result = subprocess.run(
        [sys.executable, "manage.py", "verify_receipt", str(receipt)],
        cwd=REPO,
        env={**os.environ, "PORTAL_DEVSTACK": "true"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "NOT VALID" in result.stderr and "does not match" in result.stderr
