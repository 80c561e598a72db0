"""One memory as CoreAPI exports it, and many at a time, audited like every step in
`operations`."""

from __future__ import annotations

from memory_ui.audit import Action
from memory_ui.budget import fan_out
from memory_ui.identity import Actor
from memory_ui.sources.agent_memory import Target
from memory_ui.sources.coreapi import CoreAPIError
from memory_ui.sources.coreapi import client as coreapi
from memory_ui.sources.coreapi.operations import audit_step


def memory_export(actor: Actor, target: Target) -> str:
    """The document as CoreAPI exports it (combined: what the agent reads), audited."""
    return memory_export_many(actor, [target])[0]


def memory_export_many(actor: Actor, targets: list[Target]) -> list[str]:
    """Several exports, a few at a time. Each is audited afterwards on this thread; the
    first failure is raised once all are audited."""

    def fetch(target: Target) -> str | CoreAPIError:
        try:
            return coreapi.get_client().export_memory(
                actor.auth, target.scope, agent_object_id=target.agent_object_id
            )
        except CoreAPIError as exc:
            return exc

    results = fan_out(fetch, targets)
    for target, result in zip(targets, results, strict=True):
        if isinstance(result, CoreAPIError):
            audit_step(actor, Action.EXPORT, target, error=result)
        else:
            audit_step(actor, Action.EXPORT, target, before=result)
    texts = []
    for result in results:
        if isinstance(result, CoreAPIError):
            raise result
        texts.append(result)
    return texts
