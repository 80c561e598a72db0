"""Erasure receipts (issue 29): support's deletion request and a person's "Clear
everything" end with a signed receipt of what was read back, in hashes and counts only;
content left after the clear is "partly" with Erase again, never "done"; a person opens
their own receipts from Activity, and nobody else's."""

from __future__ import annotations

import hashlib
import json
import re

from django.test import Client

from memory_ui.documents import parse_document
from memory_ui.models import AuditEvent, ErasureReceipt
from memory_ui.signatures import BadSignature, verified
from tests.fake_coreapi import FakeCoreAPI
from tests.views.conftest import SUPPORT_ROLE, signed_in
from tests.views.helpers import body, field_value, page_text
from tests.views.test_support import ALICE, clear, export, start

AGENTS = (None, "benefits-assistant", "it-helpdesk", "travel-planner")


def _texts(fake: FakeCoreAPI) -> list[str]:
    """Every entry's text and every line of every memory alice has (what a receipt must
    never hold)."""
    texts = []
    for agent in AGENTS:
        document = fake.text(agent)
        texts += [entry.body.strip() for entry in parse_document(document).entries]
        texts += [line.strip() for line in document.splitlines() if len(line.strip()) > 12]
    return [text for text in texts if text]


def _holds_no_content(receipt: ErasureReceipt, texts: list[str]) -> None:
    assert texts
    for text in texts:
        assert text not in receipt.document
        assert json.dumps(text)[1:-1] not in receipt.document


def _rows(receipt: ErasureReceipt) -> dict[str, dict]:
    document, _key = verified(receipt.document.encode())
    return {row["target"]: row for row in document["targets"]}


def _request_cleared(carol: Client, fake: FakeCoreAPI, **fields: object) -> tuple[str, str]:
    """A deletion request for alice exported and cleared: its address and result page."""
    request_url = start(carol, **fields)
    export(carol, request_url)
    cleared = clear(carol, request_url)
    assert cleared.status_code == 302, page_text(cleared)
    return request_url, body(carol.get(cleared["Location"]))


def test_a_deletion_request_ends_with_a_signed_receipt_without_content(
    carol: Client, fake: FakeCoreAPI
):
    texts = _texts(fake)
    before = {agent: fake.text(agent) for agent in AGENTS}
    request_url, result = _request_cleared(carol, fake)
    receipt = ErasureReceipt.objects.get()
    document, key = verified(receipt.document.encode())
    assert key == receipt.key_id and document["subject"] == ALICE
    assert document["kind"] == "deletion-request" and document["ticket"] == "PRIV-1234"
    assert document["outcome"] == "partly"  # the agent-notes source cannot be reached here
    rows = _rows(receipt)
    shared = rows["Shared with every agent"]
    text = before[None]
    assert shared["outcome"] == "erased" and shared["system"] == "CoreAPI"
    assert shared["before"] == {
        "items": len(parse_document(text).entries),
        "bytes": len(text.encode()),
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
    }
    assert shared["after"] == {"items": 0, "bytes": 0, "sha256": hashlib.sha256(b"").hexdigest()}
    assert shared["read_back_at"]
    assert [r["outcome"] for r in rows.values() if r["system"] == "CoreAPI"] == ["erased"] * 4
    assert any(r["outcome"] == "not possible" for r in rows.values())
    _holds_no_content(receipt, texts)
    # Its hash is in the audit trail.
    event = AuditEvent.objects.get(action=AuditEvent.Action.RECEIPT)
    assert (
        event.sha256_after
        == receipt.sha256
        == hashlib.sha256(receipt.document.encode()).hexdigest()
    )
    assert event.subject_upn == ALICE and event.ticket == "PRIV-1234"
    assert event.source == AuditEvent.Source.PORTAL  # across every system, not CoreAPI
    # The result page links it; the JSON is the signed bytes; the page prints it.
    assert f"{request_url}receipt" in result
    download = carol.get(f"{request_url}receipt.json")
    assert download.status_code == 200 and download["Content-Type"] == "application/json"
    assert "attachment" in download["Content-Disposition"]
    assert download.content == receipt.document.encode()
    page = carol.get(f"{request_url}receipt")
    html = body(page)
    assert page.status_code == 200 and receipt.sha256 in html and key in html
    assert shared["before"]["sha256"] in html
    # Strict CSP: no inline script or style on the printable page.
    assert not re.search(r"<script(?![^>]*\bsrc=)", html) and " style=" not in html
    assert "<style" not in html


def test_a_memory_an_agent_writes_to_during_the_erasure_is_partly_with_erase_again(
    carol: Client, fake: FakeCoreAPI, monkeypatch
):
    request_url = start(carol, scopes=["user", "agent:it-helpdesk"])
    export(carol, request_url)
    clear_memory = fake.clear_memory

    def clear_then_the_agent_writes(auth, scope, **where):
        cleared = clear_memory(auth, scope, **where)
        if scope == "agent":
            fake.put("- Uses the VPN from home.\n", agent="it-helpdesk")
        return cleared

    monkeypatch.setattr(fake, "clear_memory", clear_then_the_agent_writes)
    response = carol.get(clear(carol, request_url)["Location"])
    html, text = body(response), page_text(response)
    assert "Partly cleared: 1 of 2" in text and "All 2 cleared" not in text
    assert "not cleared: Read back after the clear, it holds something again" in text
    form = re.search(r'<form method="post" action="[^"]*erase-again".*?</form>', html, re.S)
    assert form and "csrfmiddlewaretoken" in form[0]
    assert '<button type="submit" class="danger">Erase again</button>' in html
    rows = _rows(ErasureReceipt.objects.get())
    helpdesk = rows["IT Helpdesk"]
    assert helpdesk["outcome"] == "partly"
    assert helpdesk["after"]["items"] == 1 and helpdesk["after"]["bytes"] == 26
    assert rows["Shared with every agent"]["outcome"] == "erased"
    # The whole text (a short word can turn up by chance in the base64 signature).
    assert "Uses the VPN from home" not in ErasureReceipt.objects.get().document

    # Erase again clears what the read-back found, reads back, and signs a new receipt.
    monkeypatch.setattr(fake, "clear_memory", clear_memory)
    again = carol.post(f"{request_url}erase-again", {"nonce": field_value(html, "nonce")})
    assert again.status_code == 302
    done = page_text(carol.get(again["Location"]))
    assert "All 2 cleared" in done and "Erase again" not in done
    assert fake.text("it-helpdesk") == ""
    newest = ErasureReceipt.objects.order_by("-created_at").first()
    assert ErasureReceipt.objects.count() == 2
    rows = _rows(newest)
    assert rows["IT Helpdesk"]["outcome"] == "erased"
    # "Before" stays what the export handed over.
    assert rows["IT Helpdesk"]["before"] == helpdesk["before"]
    # The form works once.
    replayed = carol.post(f"{request_url}erase-again", {"nonce": field_value(html, "nonce")})
    assert replayed.status_code == 302 and ErasureReceipt.objects.count() == 2


def test_erase_again_never_erases_what_arrived_after_the_read_back(
    carol: Client, fake: FakeCoreAPI, monkeypatch
):
    request_url = start(carol, scopes=["agent:it-helpdesk"])
    export(carol, request_url)
    clear_memory = fake.clear_memory

    def clear_then_the_agent_writes(auth, scope, **where):
        cleared = clear_memory(auth, scope, **where)
        fake.put("- Uses the VPN from home.\n", agent="it-helpdesk")
        return cleared

    monkeypatch.setattr(fake, "clear_memory", clear_then_the_agent_writes)
    html = body(carol.get(clear(carol, request_url)["Location"]))
    monkeypatch.setattr(fake, "clear_memory", clear_memory)
    fake.put("- Uses the VPN from home.\n- Prefers a window seat.\n", agent="it-helpdesk")
    again = carol.post(f"{request_url}erase-again", {"nonce": field_value(html, "nonce")})
    text = page_text(carol.get(again["Location"]))
    assert "Nothing was cleared" in text and "It changed since the export" in text
    assert "window seat" in fake.text("it-helpdesk")
    rows = _rows(ErasureReceipt.objects.order_by("-created_at").first())
    assert rows["IT Helpdesk"]["outcome"] == "changed meanwhile"


def test_alice_sees_her_receipt_in_activity_and_bob_cannot_open_it(
    carol: Client, alice: Client, bob: Client, fake: FakeCoreAPI
):
    request_url, _result = _request_cleared(carol, fake, scopes=["user"])
    receipt = ErasureReceipt.objects.get()
    # The request's own addresses are support's, in carol's session only.
    assert alice.get(f"{request_url}receipt.json").status_code == 403
    other_staff = signed_in(Client(), "dave@contoso.com", [SUPPORT_ROLE])
    assert receipt.document.encode() not in other_staff.get(f"{request_url}receipt.json").content
    activity = body(alice.get("/activity"))
    assert "Erasure receipts" in activity
    assert f'href="/activity/receipts/{receipt.id}"' in activity
    assert "Erasure receipt signed" in activity  # its audit event
    page = alice.get(f"/activity/receipts/{receipt.id}")
    assert page.status_code == 200 and receipt.sha256 in body(page)
    download = alice.get(f"/activity/receipts/{receipt.id}.json")
    assert download.status_code == 200 and download.content == receipt.document.encode()
    for url in (f"/activity/receipts/{receipt.id}", f"/activity/receipts/{receipt.id}.json"):
        assert bob.get(url).status_code == 404
    assert "Erasure receipts" not in body(bob.get("/activity"))


def test_clear_everything_writes_a_receipt_and_offers_erase_again(
    alice: Client, fake: FakeCoreAPI, monkeypatch
):
    texts = _texts(fake)
    clear_memory = fake.clear_memory

    def clear_then_the_agent_writes(auth, scope, **where):
        cleared = clear_memory(auth, scope, **where)
        if scope == "agent" and "travel-planner" in (where.get("agent_object_id") or ""):
            fake.put("- Books aisle seats.\n", agent="travel-planner")
        return cleared

    monkeypatch.setattr(fake, "clear_memory", clear_then_the_agent_writes)
    response = alice.post("/memory/clear-everything", {"phrase": "clear everything"})
    html, text = body(response), page_text(response)
    assert "Everything is cleared" not in text
    assert "Travel Planner: not cleared. Read back after the clear" in text
    assert '<button type="submit">Erase again</button>' in html
    receipt = ErasureReceipt.objects.get()
    rows = _rows(receipt)
    assert rows["Travel Planner"]["outcome"] == "partly"
    assert rows["IT Helpdesk"]["outcome"] == "erased"
    assert verified(receipt.document.encode())[0]["by"] == "the person"
    _holds_no_content(receipt, texts)
    assert f"/activity/receipts/{receipt.id}" in html

    monkeypatch.setattr(fake, "clear_memory", clear_memory)
    scopes = re.findall(r'name="scopes" value="([^"]+)"', html)
    assert scopes == ["agent:travel-planner"]
    again = alice.post("/memory/clear-everything", {"phrase": "clear everything", "scopes": scopes})
    assert "Everything is cleared" in page_text(again)
    assert fake.text("travel-planner") == ""
    newest = ErasureReceipt.objects.order_by("-created_at").first()
    assert _rows(newest)["Travel Planner"]["outcome"] == "erased"


def test_a_tampered_receipt_from_the_portal_is_refused(carol: Client, fake: FakeCoreAPI):
    _request_cleared(carol, fake, scopes=["user"])
    data = ErasureReceipt.objects.get().document.encode()
    verified(data)
    tampered = data.replace(b'"outcome":"erased"', b'"outcome":"erasee"', 1)
    assert tampered != data
    try:
        verified(tampered)
    except BadSignature:
        return
    raise AssertionError("a changed receipt verified")
