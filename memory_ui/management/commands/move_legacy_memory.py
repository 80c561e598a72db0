"""`manage.py move_legacy_memory --store NAME --users FILE [--dry-run] [--delete-verified]
[--shard I/N] [--limit K] [--metrics-port P]`: the move of a system being turned down (`Source.turned_down`: the legacy stores) into
CoreAPI (memory_ui.memory.source_move) for many people, by an operator. `--store` names one
of its targets (a legacy store's full name, or its agent's name).

The command acts as the portal's service principal: CoreAPI's support path (app token with
X-USER-IDENTITY for each user, as support staff's requests do) and the source being turned
down with the portal's own credentials. Every step is audited with the operator as the
actor. Running it again adds nothing; a run that failed halfway is resumed by running it
again.

`--shard I/N` takes this process's share of the list (memory_ui.jobs: a Kubernetes Indexed
Job runs one pod per shard, docs/operations.md "Moving a whole tenant"). Each person's
outcome is a `JobProgress` row of the job (its store, --delete-verified and its whole list),
so a restarted pod or a second run passes over the people done, and only retries the failed.
Each person also counts in `portal_job_people_total` and logs one JSON line (counts and
an error's class; no UPN, no content, no token). With `--shard` given (a pod's logs) the
progress lines and the closing line are counts too, and the audit events are not logged
(they are in the database); without it (an operator at a terminal) they name each person.

The CoreAPI app token is asked for each person (msal keeps it until shortly before it
expires), as a shard outlives one. SIGTERM (a pod evicted) lets the current person finish,
then ends the run with a non-zero status, so the Job counts that shard as not complete.
"""

from __future__ import annotations

import getpass
import logging
import signal
import threading
from argparse import ArgumentParser, ArgumentTypeError
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, OutputWrapper
from django.utils import timezone

from memory_ui import auth
from memory_ui.identity import Actor, CallerAuth, Identity, UserIdentity
from memory_ui.jobs import (
    Shard,
    finished_people,
    job_digest,
    progress_record,
    shard_parse,
    shard_people,
)
from memory_ui.memory.source_move import (
    UNFINISHED,
    Origin,
    Result,
    Step,
    move_preview,
    move_run,
)
from memory_ui.models import JobProgress
from memory_ui.sources import generic, registry
from memory_ui.sources.protocol import Source, SourceError, SourceTarget
from portal.metrics import JOB_PEOPLE, serve_command_metrics

JOB = "move_legacy_memory"
REASON = "Legacy store turn-down (manage.py move_legacy_memory)"
BAR_WIDTH = 30
logger = logging.getLogger("memory_ui.jobs")
COLUMNS = ("user", "files", "moved", "already there", "not verified", "failed", "deleted")
DRY_COLUMNS = ("user", "files", "to move", "already there", "items new", "errors")


@dataclass
class Row:
    upn: str
    cells: tuple[str, ...]
    failed: bool
    counts: dict[str, int] = field(default_factory=dict)  # a real run's, for its progress row
    error: str = ""  # the failure's class or result, for the progress row and the log

    @property
    def state(self) -> JobProgress.State:
        if self.failed:
            return JobProgress.State.FAILED
        moved = self.counts.get("moved", 0)
        return JobProgress.State.DONE if moved else JobProgress.State.SKIPPED


def shard_arg(text: str) -> Shard:
    try:
        return shard_parse(text)
    except ValueError as exc:
        raise ArgumentTypeError(str(exc)) from exc


def read_users(path: Path) -> list[str]:
    """One UPN a line; blank lines and # comments ignored; each user once, lower case."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CommandError(f"Cannot read {path}: {exc.strerror}") from exc
    users: list[str] = []
    for number, line in enumerate(lines, 1):
        upn = line.split("#", 1)[0].strip().lower()
        if not upn:
            continue
        if "@" not in upn or any(ch.isspace() for ch in upn):
            raise CommandError(f"{path}:{number}: {upn!r} is not a UPN")
        if upn not in users:
            users.append(upn)
    return users


def operator() -> Identity:
    """Who the audit names: the portal's service principal, run by this OS user."""
    user = getpass.getuser()
    return Identity(
        oid=settings.ENTRA_CLIENT_ID,
        tid="",
        upn=f"operator:{user}",
        name=f"{user} (move_legacy_memory)",
        roles=(settings.SUPPORT_ROLE,),
        home_account_id="",
    )


def turned_down() -> Source:
    """The configured system being turned down (with an adapter to move through)."""
    found = [s for s in registry.others() if s.turned_down and s.backend is not None]
    if not found:
        raise CommandError("No memory system being turned down is configured.")
    return found[0]


def target_named(source: Source, actor: Actor, name: str) -> SourceTarget:
    """The source's target `name`, or the one kept for the agent `name`."""
    assert source.backend is not None
    backend = source.backend(actor)
    try:
        target = generic.target_of(actor, backend, name)
        if target is None:
            kept_for = (
                t for t in backend.list_targets(generic.subject_of(actor)) if t.agent == name
            )
            target = next(kept_for, None)
    except SourceError as exc:
        raise CommandError(f"{source.title} could not be read: {exc.message}") from exc
    if target is None:
        raise CommandError(f"{name} is not a configured {source.targets[0]} of {source.title}.")
    return target


def app_token() -> str:
    try:
        return auth.app_token()
    except auth.SignInFailed as exc:
        raise CommandError(f"The portal got no CoreAPI app token: {exc}") from exc


def actor_for(who: Identity, upn: str, token: str) -> Actor:
    identity = UserIdentity(name=upn, user_name=upn, user_id="", upn=upn)
    return Actor(who, CallerAuth(access_token=token, user_identity=identity), upn, reason=REASON)


def job_log(level: int, job: str, shard: Shard, message: str, **fields: object) -> None:
    """One JSON log line of this job's shard: counts and classes, never a UPN or content."""
    logger.log(
        level, message, extra={"job": JOB, "job_id": job[:12], "shard": str(shard), **fields}
    )


def progress_bar(out: OutputWrapper, done: int, total: int, label: str) -> None:
    """One line, redrawn in place on a terminal; a line per step otherwise (logs)."""
    filled = BAR_WIDTH * done // total if total else BAR_WIDTH
    line = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total} {label}"
    if out.isatty():
        out.write(f"\r\x1b[2K{line}", ending="\n" if done == total else "")
    else:
        out.write(line)
    out.flush()


@contextmanager
def sigterm_asks_to_stop() -> Iterator[threading.Event]:
    """An event set by SIGTERM while inside. As PID 1 of its container, python would
    otherwise ignore it and be killed halfway through a person at the grace period's end."""
    asked = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield asked  # only the main thread may set a signal handler
        return
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: asked.set())
    try:
        yield asked
    finally:
        signal.signal(signal.SIGTERM, previous or signal.SIG_DFL)


@contextmanager
def audit_lines_held_back() -> Iterator[None]:
    """No audit log line while inside: each names its person (UPN), and a pod's logs name
    nobody. The audit events themselves are still written to the database."""
    audit = logging.getLogger("memory_ui.audit")
    level = audit.level
    audit.setLevel(logging.WARNING)
    try:
        yield
    finally:
        audit.setLevel(level)


def tally(rows: list[Row], dry: bool) -> str:
    """The people handled so far by outcome: counts only, no UPN."""
    if dry:
        return f"{sum(row.failed for row in rows)} with errors"
    states = Counter(row.state for row in rows)
    return ", ".join(f"{states[state]} {state}" for state in JobProgress.State)


def table(columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(str(c)) for c in column) for column in zip(columns, *rows, strict=True)]
    lines = [columns, tuple("-" * w for w in widths), *rows]
    return "\n".join(
        "  ".join(str(cell).ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in lines
    )


class Command(BaseCommand):
    help = "Move people's files of a legacy memory store into CoreAPI, verified."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--store", required=True, help="The store's full name or its agent.")
        parser.add_argument(
            "--users", required=True, type=Path, help="A file with one UPN per line."
        )
        parser.add_argument("--dry-run", action="store_true", help="Preview only; no writes.")
        parser.add_argument(
            "--delete-verified",
            action="store_true",
            help="Delete the legacy copies whose move was verified by reading CoreAPI back.",
        )
        parser.add_argument(
            "--shard",
            type=shard_arg,
            help="Take shard I of N of the list (0 <= I < N): a Kubernetes Indexed Job's pod "
            "passes $JOB_COMPLETION_INDEX/<completions>. Its output then names nobody.",
        )
        parser.add_argument(
            "--limit",
            type=int,
            help="Stop after this many people (trials; tests of a pod stopped halfway).",
        )
        parser.add_argument(
            "--metrics-port",
            type=int,
            help="Serve /metrics on this port while running (PORTAL_METRICS_TOKEN, as the portal).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        # From the start: a SIGTERM while the list is read or the store looked up counts too.
        with sigterm_asks_to_stop() as stop:
            self._run(stop, options)

    def _run(self, stop: threading.Event, options: dict[str, Any]) -> None:
        source = turned_down()
        users = read_users(options["users"])
        if options["metrics_port"]:
            serve_command_metrics(options["metrics_port"])
        who = operator()
        name, dry, delete = options["store"], options["dry_run"], options["delete_verified"]
        # A shard named (a pod of the Job) logs no UPN; a run by hand at a terminal does.
        anonymous = options["shard"] is not None
        shard: Shard = options["shard"] or Shard(0, 1)
        job = job_digest(JOB, name, "delete-verified" if delete else "keep", *users)
        mine = shard_people(users, shard)
        finished = set() if dry else finished_people(job, mine)
        if finished:
            JOB_PEOPLE.labels(JOB, str(shard), JobProgress.State.SKIPPED).inc(len(finished))
            job_log(
                logging.INFO,
                job,
                shard,
                "People finished by an earlier run passed over",
                people=len(finished),
            )
        todo = [upn for upn in mine if upn not in finished][: options["limit"]]
        rows: list[Row] = []
        ended: CommandError | None = None
        quiet = audit_lines_held_back() if anonymous else nullcontext()
        with quiet:
            # Which target is configuration, the same for every user: looked up once.
            target = target_named(source, actor_for(who, who.upn, app_token()), name)
            for done, upn in enumerate(todo, 1):
                if stop.is_set():
                    ended = self._stopped(job, shard, rows, todo)
                    break
                try:
                    actor = actor_for(who, upn, app_token())
                except CommandError as exc:
                    ended = CommandError(
                        f"{exc} {len(rows)} of {len(todo)} users done; run again to resume."
                    )
                    break
                assert source.backend is not None  # turned_down() keeps sources with one
                origin = Origin(source.name, source.backend(actor), target)
                started = timezone.now()
                row = self._one(actor, origin, dry, delete)
                if not dry:
                    self._record(job, shard, started, row)
                rows.append(row)
                progress_bar(self.stderr, done, len(todo), tally(rows, dry) if anonymous else upn)
        if anonymous:
            self.stdout.write(f"{len(rows)} users: {tally(rows, dry)}.")
        else:
            columns = DRY_COLUMNS if dry else COLUMNS
            self.stdout.write(table(columns, [(row.upn, *row.cells) for row in rows]))
        if finished:
            self.stdout.write(f"{len(finished)} users passed over: done by an earlier run.")
        if ended is not None:
            raise ended
        failed = [row.upn for row in rows if row.failed]
        if failed:
            raise CommandError(f"{len(failed)} of {len(rows)} users not done; run again to resume.")

    def _stopped(self, job: str, shard: Shard, rows: list[Row], todo: list[str]) -> CommandError:
        """SIGTERM's end: one log line (counts only) and a non-zero exit, so the Job does not
        count the shard complete with people left."""
        job_log(
            logging.WARNING,
            job,
            shard,
            "Stopped by SIGTERM",
            people=len(rows),
            left=len(todo) - len(rows),
        )
        return CommandError(
            f"Stopped by SIGTERM after {len(rows)} of {len(todo)} users; run again to resume."
        )

    def _record(self, job: str, shard: Shard, started: datetime, row: Row) -> None:
        """The person's progress row, counter and log line (counts and classes only)."""
        progress_record(job, row.upn, shard, started, row.state, error=row.error, **row.counts)
        JOB_PEOPLE.labels(JOB, str(shard), row.state).inc()
        level = logging.WARNING if row.failed else logging.INFO
        job_log(
            level,
            job,
            shard,
            f"Person {row.state}",
            state=str(row.state),
            error=row.error,
            **row.counts,
        )

    def _one(self, actor: Actor, origin: Origin, dry: bool, delete: bool) -> Row:
        upn = actor.subject_upn or ""
        try:
            if dry:
                plan = move_preview(actor, origin)
                steps = [f.step for f in plan.files]
                return Row(
                    upn,
                    (
                        str(len(plan.files) + len(plan.errors)),
                        str(steps.count(Step.MOVE)),
                        str(steps.count(Step.ALREADY_THERE)),
                        str(sum(len(f.new_items) for f in plan.files)),
                        str(len(plan.errors)),
                    ),
                    bool(plan.errors),
                )
            report = move_run(actor, origin, delete_verified=delete)
        except SourceError as exc:
            error = ("?", "", "", "", f"error: {exc.message}")
            return Row(upn, error if dry else (*error, ""), True, error=type(exc).__name__)
        counts = [report.count(r) for r in (Result.MOVED, Result.ALREADY_THERE)]
        bad = [report.count(r) for r in (Result.NOT_VERIFIED, Result.FAILED)]
        deleted = sum(1 for f in report.files if f.deleted)
        cells = (str(len(report.files)), *map(str, counts), *map(str, bad), str(deleted))
        numbers = dict(
            items=len(report.files),
            moved=counts[0],
            already_there=counts[1],
            failed=sum(bad),
            deleted=deleted,
        )
        worst = next((r for r in (Result.FAILED, Result.NOT_VERIFIED) if report.count(r)), "")
        # A copy verified but not deleted when asked is not done: failed, so a rerun of the
        # job retries the delete rather than passing the person over.
        kept = delete and any(not f.deleted for f in report.files if f.result not in UNFINISHED)
        return Row(
            upn, cells, any(bad) or kept, numbers, str(worst or ("not deleted" if kept else ""))
        )
