"""The IdP's HTML pages. Every dynamic value goes through markupsafe's escaping."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping

from markupsafe import Markup
from werkzeug.wrappers import Response

from devstack.config import User

_CSS = """
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1b1f24}
main{max-width:36rem;margin:2rem auto;padding:1.5rem 2rem;background:#fff;border-radius:8px;
box-shadow:0 1px 3px rgba(0,0,0,.2)}
h1{font-size:1.4rem;margin-top:0}
.notice{border-left:4px solid #b35900;background:#fff4e5;padding:.5rem 1rem}
fieldset{border:0;padding:0;margin:1rem 0}
legend{font-weight:600;margin-bottom:.5rem}
ul{list-style:none;padding:0;margin:0}
li{margin:.5rem 0}
button{font:inherit;cursor:pointer;border-radius:6px}
.user{display:block;width:100%;text-align:left;padding:.75rem 1rem;background:#fff;
border:1px solid #8a939e;color:inherit}
.user:hover{background:#eef3fb}
.user.hinted{border:2px solid #1a4fd0}
.user span{display:block}
.name{font-weight:600}
.detail{color:#444c56;font-size:.9rem}
.secondary{padding:.5rem 1rem;background:#fff;border:1px solid #8a939e;color:inherit}
.primary{padding:.5rem 1rem;background:#1a4fd0;border:1px solid #1a4fd0;color:#fff}
button:focus-visible{outline:3px solid #1a4fd0;outline-offset:3px}
code{background:#eef0f3;padding:0 .25rem}
"""
_SUBMIT_SCRIPT = "document.forms[0].submit();"


def _csp_hash(source: str) -> str:
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


# No form-action directive: browsers apply it to the redirects that follow a form post,
# and the sign-in legitimately ends on the client's origin and wherever it redirects.
_CSP = f"default-src 'none'; style-src {_csp_hash(_CSS)}; base-uri 'none'; frame-ancestors 'none'"
_CSP_WITH_SCRIPT = f"{_CSP}; script-src {_csp_hash(_SUBMIT_SCRIPT)}"

_LAYOUT = Markup(
    '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
    "<title>{title} · devstack identity provider</title>\n<style>{css}</style>\n</head>\n"
    "<body>\n<main>\n<h1>{title}</h1>\n{body}</main>\n{script}</body>\n</html>\n"
)


def _page(title: str, body: Markup, status: int = 200, *, script: bool = False) -> Response:
    html = _LAYOUT.format(
        title=title,
        css=Markup(_CSS),
        body=body,
        script=Markup(f"<script>{_SUBMIT_SCRIPT}</script>\n") if script else "",
    )
    return Response(
        html,
        status=status,
        mimetype="text/html",
        headers={
            "Content-Security-Policy": _CSP_WITH_SCRIPT if script else _CSP,
            "X-Frame-Options": "DENY",
            "Cache-Control": "no-store",
        },
    )


def _roles(user: User) -> str:
    return f"Roles: {', '.join(user.roles)}" if user.roles else "Roles: none (end user)"


def _user_button(user: User, hinted: bool) -> Markup:
    return Markup(
        '<li><button type="submit" class="user{cls}" name="upn" value="{upn}"{autofocus}>'
        '<span class="name">{name}{hint}</span><span class="detail">{upn}</span>'
        '<span class="detail">{roles}</span></button></li>\n'
    ).format(
        cls=" hinted" if hinted else "",
        autofocus=Markup(" autofocus") if hinted else "",
        upn=user.upn,
        name=user.name,
        hint=" (suggested by the application)" if hinted else "",
        roles=_roles(user),
    )


def picker(
    client_name: str,
    action: str,
    request_id: str,
    users: tuple[User, ...],
    hinted_upn: str | None,
) -> Response:
    buttons = Markup("").join(
        _user_button(u, hinted_upn is not None and u.upn.casefold() == hinted_upn.casefold())
        for u in users
    )
    body = Markup(
        '<p class="notice"><strong>Development sign-in.</strong> This is the devstack identity '
        "provider: there are no passwords. Choosing a user signs you in to {client} as that "
        "user. Never use it for real accounts.</p>\n"
        '<form method="post" action="{action}">\n'
        '<input type="hidden" name="request_id" value="{request_id}">\n'
        "<fieldset>\n<legend>Choose a demo user</legend>\n<ul>\n{buttons}</ul>\n</fieldset>\n"
        '<button type="submit" class="secondary" name="action" value="cancel">'
        "Cancel and return to {client}</button>\n</form>\n"
    ).format(client=client_name, action=action, request_id=request_id, buttons=buttons)
    return _page("Sign in", body)


def form_post(redirect_uri: str, params: Mapping[str, str | None]) -> Response:
    """response_mode=form_post: posts the result to the client, by script or by a click."""
    fields = Markup("").join(
        Markup('<input type="hidden" name="{}" value="{}">\n').format(name, value)
        for name, value in params.items()
        if value is not None
    )
    body = Markup(
        '<form method="post" action="{action}">\n{fields}'
        "<p>Returning you to the application. If nothing happens, press Continue.</p>\n"
        '<button type="submit" class="primary">Continue</button>\n</form>\n'
    ).format(action=redirect_uri, fields=fields)
    return _page("Signing you in", body, script=True)


def error(message: str, status: int, aadsts: int | None = None) -> Response:
    body = Markup("<p>{message}</p>\n").format(message=message)
    if aadsts:
        body += Markup("<p>Error code: <code>AADSTS{code}</code></p>\n").format(code=aadsts)
    body += Markup(
        "<p>Go back to the application and start the sign-in again. If it keeps happening, "
        "the application is not configured for this devstack identity provider.</p>\n"
    )
    return _page("Sign-in error", body, status)


def signed_out(unregistered_return: bool) -> Response:
    body = Markup("<p>You have signed out of the devstack identity provider.</p>\n")
    if unregistered_return:
        body += Markup(
            "<p>The application asked to send you to an address that is not registered "
            "for it, so you stay on this page.</p>\n"
        )
    body += Markup("<p>You can close this window.</p>\n")
    return _page("You have signed out", body)
