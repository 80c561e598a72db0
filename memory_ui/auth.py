"""Sign-in with Microsoft Entra ID through msal (docs/architecture.md, Identity and authorization).

The msal token cache lives in the server-side session, never in a cookie. Every CoreAPI
call first asks msal for a token silently; when that fails the user signs in again. The
token msal gave for a session's cache is remembered in the process (`silent_tokens`) until
shortly before msal itself would refresh it, so most requests find it with a hash of the
cache and a dictionary lookup instead of building an msal application and parsing the
cache (docs/performance.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import msal
import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import BaseBackend
from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

from memory_ui.active_users import active_users
from memory_ui.identity import Identity
from memory_ui.silent_tokens import SilentTokens

logger = logging.getLogger(__name__)

SESSION_FLOW = "entra_auth_flow"
SESSION_NEXT = "entra_next"
SESSION_CACHE = "entra_token_cache"
SESSION_IDENTITY = "entra_identity"


class SignInRequired(Exception):
    """No usable token: the user must sign in again (middleware turns this into a redirect)."""


class SignInFailed(Exception):
    """The callback could not complete a sign-in; `message` is safe to show."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def current_identity(request: HttpRequest) -> Identity | None:
    raw = request.session.get(SESSION_IDENTITY)
    return Identity.from_session(raw) if raw else None


class _VerifyingSession(requests.Session):
    """REQUESTS_CA_BUNDLE in the environment overrides Session.verify; a per-request
    `verify` wins, so the configured CA is passed on every request, with a timeout."""

    def __init__(self, verify: bool | str, timeout: tuple[float, float]) -> None:
        super().__init__()
        self._verify = verify
        self._timeout = timeout

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("verify", self._verify)
        kwargs.setdefault("timeout", self._timeout)
        return super().request(method, url, *args, **kwargs)


@cache
def _http_client() -> requests.Session:
    bundle = settings.PORTAL_CA_BUNDLE
    return _VerifyingSession(bundle or True, (5, 15))


# The audience of tokens Entra ID accepts as federated credentials.
TOKEN_EXCHANGE_AUDIENCE = "api://AzureADTokenExchange"

# msal caches discovery documents here, shared by the per-request app objects.
_MSAL_HTTP_CACHE: dict[Any, Any] = {}


def reset_caches() -> None:
    """Forget the HTTP client, msal's discovery documents and the portal's app token, so
    changed settings take effect (tests point the portal at a new devstack)."""
    _http_client.cache_clear()
    _MSAL_HTTP_CACHE.clear()
    _service_app.cache_clear()
    _managed_identity.cache_clear()
    _silent_tokens.clear()


def _federated_assertion() -> str:
    # Read for every token request: workload identity rotates the file (about hourly).
    return Path(settings.ENTRA_CLIENT_ASSERTION_FILE).read_text(encoding="utf-8").strip()


@cache
def _managed_identity() -> msal.ManagedIdentityClient:
    return msal.ManagedIdentityClient(
        msal.UserAssignedManagedIdentity(client_id=settings.ENTRA_MANAGED_IDENTITY_CLIENT_ID),
        http_client=requests.Session(),
        token_cache=msal.TokenCache(),  # reused until shortly before it expires
    )


def _managed_identity_assertion() -> str:
    """A token of the user-assigned managed identity for Entra's token exchange audience,
    which the app registration trusts as a federated credential (Container Apps, App
    Service, VMs: no secret to keep)."""
    result = _managed_identity().acquire_token_for_client(resource=TOKEN_EXCHANGE_AUDIENCE)
    if "access_token" not in result:
        # msal turns this into a failed sign-in or app token, which the callers report.
        raise ValueError(f"No managed identity token: {result.get('error')}")
    return result["access_token"]


def _client_credential() -> str | dict[str, Any]:
    """The first configured of: a federated token file (AKS workload identity), a managed
    identity as federated credential, a certificate, a client secret."""
    if settings.ENTRA_CLIENT_ASSERTION_FILE:
        return {"client_assertion": _federated_assertion}
    if settings.ENTRA_MANAGED_IDENTITY_CLIENT_ID:
        return {"client_assertion": _managed_identity_assertion}
    if settings.ENTRA_CLIENT_CERTIFICATE_PATH:
        return {
            "private_key": Path(settings.ENTRA_CLIENT_CERTIFICATE_PATH).read_text(),
            "thumbprint": settings.ENTRA_CLIENT_CERTIFICATE_THUMBPRINT,
        }
    return settings.ENTRA_CLIENT_SECRET


def _msal_app(token_cache: msal.TokenCache | None = None) -> msal.ConfidentialClientApplication:
    return msal.ConfidentialClientApplication(
        settings.ENTRA_CLIENT_ID,
        client_credential=_client_credential(),
        authority=settings.ENTRA_AUTHORITY,
        token_cache=token_cache,
        http_client=_http_client(),
        http_cache=_MSAL_HTTP_CACHE,
        instance_discovery=settings.ENTRA_INSTANCE_DISCOVERY,
    )


def _load_cache(request: HttpRequest) -> msal.SerializableTokenCache:
    token_cache = msal.SerializableTokenCache()
    if serialized := request.session.get(SESSION_CACHE):
        token_cache.deserialize(serialized)
    return token_cache


def _save_cache(request: HttpRequest, token_cache: msal.SerializableTokenCache) -> None:
    # Write only real changes: parallel card requests would otherwise all save the session.
    if token_cache.has_state_changed:
        serialized = token_cache.serialize()
        if serialized != request.session.get(SESSION_CACHE):
            request.session[SESSION_CACHE] = serialized


def safe_next(request: HttpRequest, candidate: str | None) -> str:
    """Only a local path is accepted as a post-sign-in destination."""
    if (
        candidate
        and candidate.startswith("/")
        and not candidate.startswith("//")
        and url_has_allowed_host_and_scheme(
            candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        )
    ):
        return candidate
    return reverse("dashboard")


def redirect_uri(request: HttpRequest) -> str:
    return settings.ENTRA_REDIRECT_URI or request.build_absolute_uri(reverse("auth_callback"))


def login_start(request: HttpRequest, next_url: str) -> str:
    """Begin the auth code flow (PKCE, state, nonce by msal); returns the IdP URL."""
    flow = _msal_app().initiate_auth_code_flow(
        scopes=[settings.COREAPI_SCOPE], redirect_uri=redirect_uri(request)
    )
    request.session[SESSION_FLOW] = flow
    request.session[SESSION_NEXT] = next_url
    return flow["auth_uri"]


@dataclass(frozen=True)
class SignIn:
    identity: Identity
    next_url: str
    token_cache: str  # msal's serialized cache, for the session once the user is logged in


def login_finish(request: HttpRequest, params: dict[str, str]) -> SignIn:
    """Complete the flow started in this session; the flow is single-use."""
    flow = request.session.pop(SESSION_FLOW, None)
    next_url = request.session.pop(SESSION_NEXT, None) or reverse("dashboard")
    if not flow:
        raise SignInFailed(
            "This sign-in response is not for a sign-in started here, or it was already used."
        )
    if params.get("error"):
        logger.info("Sign-in refused by the identity provider: %s", params.get("error"))
        raise SignInFailed("The identity provider did not sign you in. Please try again.")
    token_cache = _load_cache(request)
    try:
        result = _msal_app(token_cache).acquire_token_by_auth_code_flow(flow, params)
    except ValueError as exc:  # msal: state mismatch or a malformed response
        logger.info("Sign-in callback rejected: %s", type(exc).__name__)
        raise SignInFailed(
            "This sign-in response does not match your sign-in. Please try again."
        ) from exc
    except requests.RequestException as exc:
        logger.warning("Identity provider unreachable during sign-in: %s", type(exc).__name__)
        raise SignInFailed(
            "The identity provider is unavailable. Please try again shortly."
        ) from exc
    if "error" in result:
        logger.info("Token redemption failed: %s", result.get("error"))
        raise SignInFailed("The sign-in could not be completed. Please try again.")
    identity = Identity.from_claims(result.get("id_token_claims") or {})
    if not identity.oid or not identity.upn:
        raise SignInFailed("The identity provider's answer lacked your user id.")
    return SignIn(identity, next_url, token_cache.serialize())


def remember_sign_in(request: HttpRequest, sign_in: SignIn) -> None:
    """After Django's login(), which may flush a previous user's session."""
    request.session[SESSION_CACHE] = sign_in.token_cache
    request.session[SESSION_IDENTITY] = sign_in.identity.to_session()


_silent_tokens = SilentTokens()


def coreapi_token(request: HttpRequest) -> str:
    """The signed-in user's delegated CoreAPI token, refreshed silently when needed."""
    identity = current_identity(request)
    if identity is None:
        raise SignInRequired
    serialized = request.session.get(SESSION_CACHE)
    if not serialized:
        raise SignInRequired
    key = SilentTokens.key(serialized, identity)
    if remembered := _silent_tokens.get(key):
        return remembered
    token_cache = _load_cache(request)
    app = _msal_app(token_cache)
    accounts = app.get_accounts(username=identity.upn) or []
    account = next(
        (a for a in accounts if a.get("home_account_id") == identity.home_account_id),
        accounts[0] if accounts else None,
    )
    if account is None:
        raise SignInRequired
    try:
        result = app.acquire_token_silent([settings.COREAPI_SCOPE], account=account)
    except requests.RequestException as exc:
        logger.warning("Identity provider unreachable for a silent token: %s", type(exc).__name__)
        raise SignInRequired from exc
    _save_cache(request, token_cache)
    if not result or "access_token" not in result:
        raise SignInRequired
    if serialized := request.session.get(SESSION_CACHE):
        _silent_tokens.put(SilentTokens.key(serialized, identity), result)
    return result["access_token"]


def logout_url(request: HttpRequest) -> str:
    post_logout = settings.ENTRA_POST_LOGOUT_REDIRECT_URI or request.build_absolute_uri(
        reverse("signed_out")
    )
    authority = settings.ENTRA_AUTHORITY.rstrip("/")
    return f"{authority}/oauth2/v2.0/logout?" + urlencode({"post_logout_redirect_uri": post_logout})


def end_session_origin() -> str:
    """scheme://host[:port] of the IdP's end-session endpoint (`logout_url`), or "" when
    ENTRA_AUTHORITY is not an absolute URL."""
    parts = urlsplit(settings.ENTRA_AUTHORITY)
    host = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme}://{host}" if parts.scheme and host else ""


def sign_out_form_action(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """Middleware (inside Django's CSP middleware): CSP `form-action` also allows the IdP's
    origin, so the sign-out form on every page may follow logout_view's redirect to the
    end-session endpoint. Chromium checks a form's redirects against the policy of the page
    holding the form, not the redirect's own, so this cannot be limited to the logout
    response. The origin is read from ENTRA_AUTHORITY per response, so it always matches
    `logout_url` (tests point ENTRA_AUTHORITY at an IdP on a random port)."""

    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        policy = settings.SECURE_CSP
        form_action = list(policy.get("form-action") or ())
        origin = end_session_origin()
        # A view's own policy (django.views.decorators.csp.csp_override, which sets
        # _csp_config) wins; a policy without form-action allows every target already.
        if (
            form_action
            and origin
            and origin not in form_action
            and not hasattr(response, "_csp_config")
        ):
            response._csp_config = {**policy, "form-action": [*form_action, origin]}  # type: ignore[attr-defined]
        return response

    return middleware


class EntraBackend(BaseBackend):
    """Django users keyed by the Entra object id; names and roles come from the id_token."""

    def authenticate(  # type: ignore[override]
        self, request: HttpRequest | None, identity: Identity | None = None
    ) -> AbstractBaseUser | None:
        if identity is None:
            return None
        user_model = get_user_model()
        user, _ = user_model.objects.update_or_create(
            username=identity.oid,
            defaults={"email": identity.upn[:254], "first_name": identity.name[:150]},
        )
        return user

    def get_user(self, user_id: int) -> AbstractBaseUser | None:
        return active_users.get(user_id)


@cache
def _service_app() -> msal.ConfidentialClientApplication:
    """The portal's own identity, shared by the process so its app token is cached."""
    return _msal_app(msal.TokenCache())


def app_token() -> str:
    """A client-credentials CoreAPI token of the portal's service principal (support
    calls). Raises SignInFailed with a message safe to show when none can be had."""
    return _service_token(settings.COREAPI_APP_SCOPE, "CoreAPI")


def legacy_app_token() -> str:
    """The portal service principal's token for the legacy memory stores
    (docs/legacy-stores.md); raises SignInFailed like app_token."""
    return _service_token(settings.LEGACY_STORES_TOKEN_SCOPE, "legacy memory store")


def graph_app_token() -> str:
    """The portal service principal's Microsoft Graph token (`User.Read.All`), for support's
    look-ups of a person's object id (memory_ui.directory); raises SignInFailed like
    app_token."""
    return _service_token(settings.GRAPH_SCOPE, "Microsoft Graph")


def _service_token(scope: str, system: str) -> str:
    # msal caches one token per scope in the shared app until shortly before it expires.
    try:
        result = _service_app().acquire_token_for_client(scopes=[scope])
    except (ValueError, requests.RequestException) as exc:
        logger.warning("No app token for %s: %s", system, type(exc).__name__)
        raise SignInFailed(f"The portal could not get its own {system} token; try again.") from exc
    if "access_token" not in result:
        logger.warning("App token for %s refused: %s", system, result.get("error"))
        raise SignInFailed(f"The portal's own {system} credentials were refused; ask an operator.")
    return result["access_token"]
