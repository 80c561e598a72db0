"""Benchmark: how often work is lost or duplicated when requests race.

Against the real devstack over HTTP, with the portal under gunicorn:

1. Lost agent appends. Each portal flow that replaces or clears alice's user memory (edit
   save, edit one entry, delete entry, undo, import replace, clear) is posted while an
   "agent" appends to the same memory directly at the emulator with alice's delegated
   token. The append is timed to land at a point swept across the portal request's duration
   (measured first, without the agent). A try is a loss when the portal answered 2xx/3xx
   and the agent's text is not in the document afterwards; "done" counts the 2xx/3xx
   answers (the rest are 409 "changed meanwhile"). The entry changed is never the agent's.
2. Double submit without JavaScript: one rendered note form posted twice at once.
3. Unknown outcomes: appends slower than the portal's read timeout; a try counts when the
   portal said "Nothing was added" but the note is in the document a few seconds later.
4. Re-sent after a timeout: the form the portal gave back after 3 is sent again, as a
   person would; a try counts when the note is then stored twice.
5. Restore interrupted: an "Export everything" zip restored (append) while imports are
   slower than the portal's read timeout, then run again from the same page once CoreAPI
   is fast; a try counts when the memory then holds the archive more than once.

    .venv/bin/python bench/integrity.py [--portal-dir DIR] [--tries 20] [--latencies 0,100]

`--portal-dir` is the directory whose `portal.wsgi` gunicorn serves (e.g. an older
checkout made with `git worktree add`); the devstack and the interpreter are this tree's.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import requests

# Run as a file: the repository's packages (devstack, tests) come from its root.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from devstack.config import issuer, load_fixtures
from devstack.coreapi.app import emulator
from devstack.coreapi.faults import Faults
from devstack.pki import ensure_pki
from devstack.tokens import delegated_access_token
from tests.pages import forms
from tests.stack import REPO, UPN, Devstack, sign_in, start_devstack, start_portal

TIMEOUT = 30  # every HTTP request, portal or emulator


class Agent:
    """An agent acting for alice: straight to the emulator with her delegated token."""

    def __init__(self, stack: Devstack) -> None:
        demo = stack.fixtures
        token = delegated_access_token(
            ensure_pki(stack.home),
            demo,
            issuer(stack.idp.url, demo.tenant_id),
            demo.user(UPN),
            demo.portal,
        )
        self.base = f"{stack.coreapi.url}/instances/{demo.instance_id}/memory"
        self.http = requests.Session()
        self.http.trust_env = False
        self.http.verify = stack.ca
        self.http.headers["Authorization"] = f"Bearer {token}"

    def text(self) -> str:
        response = self.http.get(self.base, params={"scope": "user"}, timeout=TIMEOUT)
        response.raise_for_status()
        return response.json()["content_markdown"]

    def _post(self, path: str, body: dict) -> None:
        response = self.http.post(f"{self.base}/{path}", json=body, timeout=TIMEOUT)
        response.raise_for_status()

    def append(self, text: str) -> None:
        self._post("append", {"scope": "user", "content_markdown": text, "reason": "agent"})

    def replace(self, text: str) -> None:
        self._post("import", {"scope": "user", "content_markdown": text, "mode": "replace"})


def form_for(html: str, action: str, **fields: str):
    for form in forms(html):
        if form.action.split("?")[0] == action and all(
            form.fields.get(k) == v for k, v in fields.items()
        ):
            return form
    raise RuntimeError(f"no form posting to {action} with {fields}")


# Each flow: the steps before the raced request (not raced), returning its URL and fields.
Prepared = tuple[str, dict[str, str]]


def prepare_edit(browser: requests.Session, portal: str) -> Prepared:
    page = browser.get(f"{portal}/memory/edit", params={"scope": "user"}, timeout=TIMEOUT)
    page.raise_for_status()
    fields = form_for(page.text, "/memory/edit").fields
    return "/memory/edit", {**fields, "content": BASELINE + EDITED, "action": "save"}


def prepare_entry_edit(browser: requests.Session, portal: str) -> Prepared:
    page = browser.get(
        f"{portal}/memory/entries/edit", params={"scope": "user", "index": 0}, timeout=TIMEOUT
    )
    page.raise_for_status()
    fields = form_for(page.text, "/memory/entries/edit").fields
    return "/memory/entries/edit", {**fields, "content": EDITED.strip(), "action": "save"}


def prepare_delete(browser: requests.Session, portal: str) -> Prepared:
    page = browser.get(f"{portal}/memory/user", timeout=TIMEOUT)
    page.raise_for_status()
    fields = form_for(page.text, "/memory/entries/delete").fields
    # Each entry's Delete button sits outside the form (form="entry-delete" name="index").
    return "/memory/entries/delete", {**fields, "index": "0"}


def prepare_undo(browser: requests.Session, portal: str) -> Prepared:
    url, fields = prepare_delete(browser, portal)
    deleted = browser.post(portal + url, data=fields, allow_redirects=False, timeout=TIMEOUT)
    assert deleted.status_code == 302, deleted.status_code
    shown = browser.get(portal + deleted.headers["Location"], timeout=TIMEOUT)
    return "/memory/undo", form_for(shown.text, "/memory/undo").fields


def prepare_import(browser: requests.Session, portal: str) -> Prepared:
    page = browser.get(f"{portal}/memory/user/import", timeout=TIMEOUT)
    page.raise_for_status()
    upload = form_for(page.text, "/memory/user/import/preview").fields
    preview = browser.post(
        f"{portal}/memory/user/import/preview",
        files={**{k: (None, v) for k, v in upload.items()}, "pasted": (None, IMPORTED)},
        timeout=TIMEOUT,
    )
    preview.raise_for_status()
    fields = form_for(preview.text, "/memory/user/import/confirm").fields
    # The previewed text comes back in a hidden textarea, which forms() does not read.
    fields = {**fields, "text": IMPORTED, "mode": "replace", "confirm_replace": "yes"}
    return "/memory/user/import/confirm", fields


def prepare_clear(browser: requests.Session, portal: str) -> Prepared:
    page = browser.get(f"{portal}/memory/clear", params={"scope": "user"}, timeout=TIMEOUT)
    page.raise_for_status()
    return "/memory/clear", {**form_for(page.text, "/memory/clear").fields, "confirm": "true"}


FLOWS: dict[str, Callable[[requests.Session, str], Prepared]] = {
    "edit save": prepare_edit,
    "edit one entry": prepare_entry_edit,
    "delete entry": prepare_delete,
    "undo": prepare_undo,
    "import replace": prepare_import,
    "clear one": prepare_clear,
}
BASELINE = ""  # alice's user memory as seeded, restored before every try
EDITED = "\n- Edited in the portal by the benchmark.\n"
IMPORTED = "- Imported by the benchmark.\n"


def at(moment: float, call: Callable[[], object], out: dict, key: str) -> threading.Thread:
    def run() -> None:
        time.sleep(max(0.0, moment - time.monotonic()))
        try:
            out[key] = call()
        except Exception as exc:  # reported, not fatal
            out[key] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@dataclass
class Count:
    hits: int = 0
    tries: int = 0
    notes: dict[str, int] | None = None
    done: int | None = None  # answered 2xx/3xx (figure 1)

    def note(self, what: str) -> None:
        self.notes = self.notes or {}
        self.notes[what] = self.notes.get(what, 0) + 1

    def __str__(self) -> str:
        return f"{self.hits} of {self.tries}"

    def detail(self) -> str:
        return ", ".join(f"{k} x{v}" for k, v in sorted((self.notes or {}).items()))


def status_of(result: object) -> str:
    if isinstance(result, requests.Response):
        return str(result.status_code)
    return type(result).__name__


def lost_appends(
    browser: requests.Session, portal: str, agent: Agent, flow: str, latency_ms: int, tries: int
) -> Count:
    prepare = FLOWS[flow]
    # How long the raced request takes here, without the agent: the window to sweep.
    agent.replace(BASELINE)
    url, fields = prepare(browser, portal)
    start = time.monotonic()
    browser.post(portal + url, data=fields, allow_redirects=False, timeout=TIMEOUT)
    window = time.monotonic() - start
    count = Count(tries=tries)
    for i in range(tries):
        agent.replace(BASELINE)
        url, fields = prepare(browser, portal)
        marker = f"- Agent fact {uuid.uuid4().hex[:12]}."
        t0 = time.monotonic() + 0.05
        # The emulator delays the append by `latency_ms` before storing it.
        lands = t0 + window * (i + 0.5) / tries - latency_ms / 1000
        out: dict[str, object] = {}
        threads = [
            at(
                t0,
                partial(
                    browser.post,
                    portal + url,
                    data=fields,
                    allow_redirects=False,
                    timeout=TIMEOUT,
                ),
                out,
                "portal",
            ),
            at(lands, partial(agent.append, marker), out, "agent"),
        ]
        for thread in threads:
            thread.join()
        if isinstance(out["agent"], Exception):
            count.note(f"agent {out['agent']!r}")
            continue
        portal_answer = status_of(out["portal"])
        count.note(portal_answer)
        succeeded = isinstance(out["portal"], requests.Response) and (
            200 <= out["portal"].status_code < 400
        )
        count.done = (count.done or 0) + succeeded
        if succeeded and marker not in agent.text():
            count.hits += 1
    return count


def note_form(browser: requests.Session, portal: str) -> Prepared:
    page = browser.get(f"{portal}/memory/append", params={"scope": "user"}, timeout=TIMEOUT)
    page.raise_for_status()
    form = next(f for f in forms(page.text) if f.action.split("?")[0] == "/memory/append")
    return "/memory/append", form.fields


def double_submits(browser: requests.Session, portal: str, agent: Agent, tries: int) -> Count:
    count = Count(tries=tries)
    for _ in range(tries):
        agent.replace(BASELINE)
        url, fields = note_form(browser, portal)
        note = f"- Note {uuid.uuid4().hex[:12]}."
        data = {**fields, "content": note, "reason": "Double submit"}
        out: dict[str, object] = {}
        t0 = time.monotonic() + 0.05
        post = partial(
            browser.post, portal + url, data=data, allow_redirects=False, timeout=TIMEOUT
        )
        threads = [at(t0, post, out, "first"), at(t0, post, out, "second")]
        for thread in threads:
            thread.join()
        count.note("+".join(sorted(status_of(out[k]) for k in ("first", "second"))))
        if agent.text().count(note) >= 2:
            count.hits += 1
    return count


def unknown_outcomes(
    browser: requests.Session, portal: str, agent: Agent, tries: int, settle: float
) -> tuple[Count, Count]:
    """Figures 3 and 4: misreported outcomes, and notes stored twice once re-sent."""
    count, twice = Count(tries=tries), Count(tries=tries)
    for _ in range(tries):
        url, fields = note_form(browser, portal)
        note = f"- Slow note {uuid.uuid4().hex[:12]}."
        data = {**fields, "content": note, "reason": "Slow CoreAPI"}
        answer = browser.post(portal + url, data=data, allow_redirects=False, timeout=TIMEOUT)
        said_failed = "Nothing was added" in answer.text
        count.note(f"{answer.status_code}{' Nothing was added' if said_failed else ''}")
        time.sleep(settle)  # the slow append lands meanwhile
        if said_failed and note in agent.text():
            count.hits += 1
        # The person sends the form they got back (its textarea holds what they typed).
        given_back = form_for(answer.text, "/memory/append").fields
        again = browser.post(
            portal + url,
            data={**given_back, "content": note, "reason": "Slow CoreAPI"},
            allow_redirects=False,
            timeout=TIMEOUT,
        )
        twice.note(status_of(again))
        time.sleep(settle)  # a second append, if one was sent, lands meanwhile
        if agent.text().count(note) >= 2:
            twice.hits += 1
    return count, twice


def restore_interrupted(
    browser: requests.Session,
    portal: str,
    agent: Agent,
    tries: int,
    slow: Callable[[bool], None],
    settle: float,
) -> Count:
    """Figure 5: `slow(True)` makes imports outlast the portal's read timeout."""
    count = Count(tries=tries)
    for _ in range(tries):
        marker = f"- Archived fact {uuid.uuid4().hex[:12]}."
        agent.replace(f"{BASELINE.rstrip()}\n\n{marker}\n")
        archive = browser.get(f"{portal}/export/everything", timeout=TIMEOUT)
        archive.raise_for_status()
        home = browser.get(f"{portal}/import", timeout=TIMEOUT)
        upload = form_for(home.text, "/import/archive").fields
        uploaded = browser.post(
            f"{portal}/import/archive",
            files={"archive": ("export.zip", archive.content, "application/zip")},
            data=upload,
            allow_redirects=False,
            timeout=TIMEOUT,
        )
        assert uploaded.status_code == 302, uploaded.status_code
        preview_url = portal + uploaded.headers["Location"]
        apply = next(
            f
            for f in forms(browser.get(preview_url, timeout=TIMEOUT).text)
            if f.action.endswith("/apply")
        )
        data = {**apply.fields, "mode": "append", "scopes": ["user"]}
        slow(True)
        first = browser.post(
            portal + apply.action, data=data, allow_redirects=False, timeout=TIMEOUT
        )
        time.sleep(settle)  # the slow import lands meanwhile
        slow(False)
        # Run again from the same page, as a person does after an interruption.
        again = next(
            f
            for f in forms(browser.get(preview_url, timeout=TIMEOUT).text)
            if f.action.endswith("/apply")
        )
        second = browser.post(
            portal + again.action,
            data={**again.fields, "mode": "append", "scopes": ["user"]},
            allow_redirects=False,
            timeout=TIMEOUT,
        )
        count.note(f"{status_of(first)}+{status_of(second)}")
        if agent.text().count(marker) > 2:  # the original and one restored copy
            count.hits += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--portal-dir", type=Path, default=REPO, help="the tree whose portal.wsgi is served"
    )
    parser.add_argument("--tries", type=int, default=20, help="per flow and latency")
    parser.add_argument(
        "--latencies", default="0,100", help="emulator latency, ms, comma-separated"
    )
    parser.add_argument("--double-tries", type=int, default=10)
    parser.add_argument("--double-latency-ms", type=int, default=100)
    parser.add_argument("--unknown-tries", type=int, default=10)
    parser.add_argument("--slow-ms", type=int, default=2000, help="latency of appends, figure 3")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    args = parser.parse_args()
    latencies = [int(x) for x in args.latencies.split(",") if x]  # "": skip figure 1
    command = " ".join([os.path.relpath(sys.executable), *sys.argv])

    global BASELINE
    home = Path(tempfile.mkdtemp(prefix="memory-portal-integrity-"))  # fresh state per run
    demo = load_fixtures()
    stack = start_devstack(home, demo, Faults())
    faults_of = emulator(stack.coreapi)
    portals = []
    began = time.monotonic()
    try:
        portal = start_portal(stack, portal_dir=args.portal_dir, workers=args.workers)
        portals.append(portal)
        # Figure 3 needs a read timeout below the emulator's delay: a portal of its own.
        slow_portal = start_portal(
            stack,
            portal_dir=args.portal_dir,
            name="portal-timeout-1s",
            workers=args.workers,
            extra_env={"COREAPI_READ_TIMEOUT": "1"},
        )
        portals.append(slow_portal)
        print(f"state and portal logs: {home}", flush=True)
        browser = sign_in(portal.url, stack.ca)
        agent = Agent(stack)
        BASELINE = agent.text()

        rows: list[tuple[str, str, Count]] = []
        for latency in latencies:
            faults_of.faults = Faults(latency_ms=latency, path_regex="^/instances/")
            for flow in FLOWS:
                count = lost_appends(browser, portal.url, agent, flow, latency, args.tries)
                rows.append((f"lost agent append: {flow}", f"{latency} ms", count))
                print(f"  {rows[-1][0]} @ {latency} ms: {count} ({count.detail()})", flush=True)

        faults_of.faults = Faults(latency_ms=args.double_latency_ms, path_regex="^/instances/")
        count = double_submits(browser, portal.url, agent, args.double_tries)
        rows.append(
            ("note stored twice (double submit, no JS)", f"{args.double_latency_ms} ms", count)
        )

        faults_of.faults = Faults(latency_ms=args.slow_ms, path_regex="/memory/append")
        slow_browser = sign_in(slow_portal.url, stack.ca)
        count, twice = unknown_outcomes(
            slow_browser, slow_portal.url, agent, args.unknown_tries, settle=args.slow_ms / 1000 + 2
        )
        slow_appends = f"{args.slow_ms} ms on appends"
        rows.append(('"Nothing was added" but it was (read timeout 1 s)', slow_appends, count))
        rows.append(
            ("note stored twice when the given-back form is sent again", slow_appends, twice)
        )

        def slow_imports(on: bool) -> None:
            slow = Faults(latency_ms=args.slow_ms, path_regex="/memory/import")
            faults_of.faults = slow if on else Faults()

        count = restore_interrupted(
            slow_browser,
            slow_portal.url,
            agent,
            args.unknown_tries,
            slow_imports,
            settle=args.slow_ms / 1000 + 2,
        )
        rows.append(
            (
                "restore run again after an interruption: archive stored twice",
                f"{args.slow_ms} ms on imports",
                count,
            )
        )
    finally:
        for running in portals:
            running.stop()
        stack.stop()

    print(f"portal: {args.portal_dir.resolve()}")
    print(f"command: {command}")
    print(f"took {time.monotonic() - began:.0f} s")
    print()
    print("| what | CoreAPI latency | happened | done (2xx/3xx) | portal answers |")
    print("|---|---|---|---|---|")
    for what, latency, count in rows:
        done = "" if count.done is None else count.done
        print(f"| {what} | {latency} | {count} | {done} | {count.detail()} |")


if __name__ == "__main__":
    main()
