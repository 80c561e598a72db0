"""`{% load portal_components %}`: the portal's repeated page parts, written once.

- `{% breadcrumb label url … here %}`: where the page sits. Label/URL pairs for the pages
  above it, then its own label (not a link). The trail starts at "Your memory" (the
  dashboard), or at "Support" with `root="support"`.
- `{% alert message lead="We couldn't …" retry=url %}`: an error (or `kind="warning"`)
  announced to screen readers (`role="alert"`), with an optional "Try again" link and
  `focus=True` to move focus to it after a change that failed. `message` may be any
  source's error (`SourceError`): its message, and "Sign in again" only where signing in
  can help (the person's sign-in expired; never a source refusing the portal itself).
- `{% blockalert %}<p>…</p>{% endblockalert %}`: the same error alert around markup of
  the page's own (a list, a retry done in place by htmx, a name inside the sentence);
  `role="note"` for one shown as the page opens rather than announced.
- `{% cancel url "edit-progress" "Working…" close_panel=request.htmx %}`: a change form's
  Cancel link and the indicator its `hx-indicator` names.
- `{{ target|crumb }}`: a memory's own crumb on its page.
- `{{ count|counted:"entry" }}`: "1 entry", "3 entries" (the plurals are in `PLURALS`).
"""

from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse
from django.utils.safestring import SafeString

from memory_ui.sources.agent_memory import USER_MEMORY_LABEL, Target
from memory_ui.sources.protocol import SourceError

register = template.Library()

# The nouns pages count, with their plurals (English plurals are not all "+s").
PLURALS = {"agent": "agents", "entry": "entries", "match": "matches", "memory": "memories"}
ROOTS = {"memory": ("Your memory", "dashboard"), "support": ("Support", "support_home")}


@register.inclusion_tag("memory_ui/components/breadcrumb.html")
def breadcrumb(*trail: str, root: str = "memory") -> dict[str, Any]:
    *above, here = trail
    label, url_name = ROOTS[root]
    links = [(label, reverse(url_name)), *zip(above[::2], above[1::2], strict=True)]
    return {"links": links, "here": here}


@register.inclusion_tag("memory_ui/components/alert.html", takes_context=True)
def alert(
    context: template.Context,
    message: object,
    *,
    lead: str = "",
    retry: str = "",
    retry_label: str = "Try again",
    kind: str = "error",
    focus: bool = False,
) -> dict[str, Any]:
    # A source's error shows its message; an expired sign-in offers to sign in again (back
    # to this page) instead of a retry that could only fail the same way, and a refusal
    # that trying again would only repeat offers no retry.
    error = message if isinstance(message, SourceError) else None
    return {
        "request": context.get("request"),
        "message": error.message if error else message,
        "sign_in": error is not None and error.sign_in_helps,
        "lead": lead,
        "retry": retry if error is None or error.retry_helps else "",
        "retry_label": retry_label,
        "kind": kind,
        "role": "alert",
        "focus": focus,
    }


@register.simple_block_tag(takes_context=True)
def blockalert(
    context: template.Context, content: SafeString, *, role: str = "alert"
) -> SafeString:
    # {% alert %}'s own template, so the error alert's wrapper is written once.
    alert_html = context.template.engine.get_template("memory_ui/components/alert.html")
    return alert_html.render(context.new({"body": content, "kind": "error", "role": role}))


@register.inclusion_tag("memory_ui/components/cancel.html")
def cancel(url: str, progress: str, working: str, *, close_panel: bool = False) -> dict[str, Any]:
    # close_panel: in a change panel opened in place, Cancel closes it (portal.js).
    return {"url": url, "progress": progress, "working": working, "close_panel": close_panel}


@register.filter
def crumb(target: Target | str) -> str:
    """A memory page's last crumb: the agent (and "what it sees" on the combined page) or
    the shared memory (also when the page has no target: its agent could not be found)."""
    if not isinstance(target, Target) or target.agent is None:
        return USER_MEMORY_LABEL
    if target.scope == "combined":
        return f"{target.agent.display_name} · what it sees"
    return target.agent.display_name


@register.filter
def counted(count: int, noun: str) -> str:
    return f"{count} {noun if count == 1 else PLURALS[noun]}"
