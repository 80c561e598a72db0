"""Memory Portal settings, read from the environment only.

Every variable is documented in README.md ("Configuration"). Nothing defaults to the
devstack unless PORTAL_DEVSTACK asks for it (`./dev`, `manage.py devstack`, the tests and
the benchmarks do); otherwise every variable a deployment must set is checked here, at
start-up, and one error names all the missing ones.

Over 400 lines: every setting is read in this one module, so that one place says all
the portal can be told (README.md, Configuration, documents each).
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

# The helpers stay importable from here (portal.settings.env and friends).
from portal.environment import (
    conflicting_credentials,
    env,
    env_bool,
    env_float,
    env_int,
    env_list,
    missing_settings,
)

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DJANGO_DEBUG", False)
# Development and tests against devstack/: its URLs, client and CA as defaults, and its
# management commands. Never inherited silently: something has to ask for it.
DEVSTACK = env_bool("PORTAL_DEVSTACK", False)


if not DEVSTACK and not DEBUG and (_missing := missing_settings(os.environ)):
    raise ImproperlyConfigured(
        "Memory Portal is not configured. Set these environment variables (README.md, "
        "Configuration), or PORTAL_DEVSTACK=true to run against the devstack: "
        + "; ".join(_missing)
        + "."
    )
if _conflicting := conflicting_credentials(os.environ):
    raise ImproperlyConfigured(
        "Give Entra ID one credential, not several: "
        + " and ".join(_conflicting)
        + " are all set (README.md, Configuration). Remove all but the one this "
        "deployment uses (on Container Apps: ENTRA_MANAGED_IDENTITY_CLIENT_ID)."
    )

SECRET_KEY = env("DJANGO_SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("DJANGO_SECRET_KEY is required when DJANGO_DEBUG is off.")
    SECRET_KEY = "devstack-only-insecure-secret-key-do-not-use-in-production"

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost" if DEVSTACK else "")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS")

# Public https deployment: secure cookies and HSTS. Off for the http devstack.
HTTPS = env_bool("PORTAL_HTTPS", not DEBUG)
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 31536000 if HTTPS else 0)
# Off by default: both commit every subdomain of the portal's domain to https for the
# max-age (preload: for good, once browsers ship the list). Turn on when the domain is ready.
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", False)
SECURE_SSL_REDIRECT = env_bool("DJANGO_SSL_REDIRECT", False)
if env_bool("DJANGO_BEHIND_TLS_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_AGE = env_int("PORTAL_SESSION_SECONDS", 8 * 3600)
SESSION_COOKIE_NAME = "memory_portal_session"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "memory_ui",
]
# Development commands (python manage.py devstack, devstack_token), only when asked for:
# the portal's own code never imports devstack, and production images leave it out.
if DEVSTACK:
    INSTALLED_APPS.append("devstack")

MIDDLEWARE = [
    # First the request id, so every access line has one, probes' too. Then probes and
    # /metrics answer whatever the Host header (a pod IP) and the scheme; telemetry's
    # middleware goes after them (portal/telemetry.py), since it reads the Host.
    "portal.requestid.request_ids",
    "portal.probes.probes",
    "portal.metrics.metrics",
    "django.middleware.security.SecurityMiddleware",
    # Outside everything that may fail (sessions, the user): every page, fragment and error
    # page gets the policy, also one answered by the 500 handler for a failure on the way
    # out (portal/outages.py).
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "memory_ui.web.deadline.request_deadline",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "memory_ui.web.privacy.private_when_signed_in",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "memory_ui.auth.sign_out_form_action",  # inside the CSP middleware: adds to its policy
    "django_htmx.middleware.HtmxMiddleware",
    "memory_ui.web.held_forms.held_forms",  # outside htmx_redirects: sees its HX-Redirect
    "memory_ui.web.htmx.htmx_redirects",
    "memory_ui.web.htmx.htmx_messages",
]

ROOT_URLCONF = "portal.urls"
WSGI_APPLICATION = "portal.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "memory_ui.web.context_processors.portal",
            ],
            # `{% url %}` with each URL kept once worked out (the module says why).
            "builtins": ["memory_ui.templatetags.portal_urls"],
        },
    },
]
FORM_RENDERER = "memory_ui.web.forms.renderer.PortalFormRenderer"

DATABASES = {
    "default": dj_database_url.parse(
        env("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60),
        # A persistent connection is checked before each request reuses it, so a database
        # restart (or failover) costs one reconnect instead of 500s until it times out.
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A database that does not answer fails a request in seconds (a 503 page,
    # portal/outages.py) instead of holding its worker thread until TCP gives up.
    DATABASES["default"].setdefault("OPTIONS", {})["connect_timeout"] = env_int(
        "DATABASE_CONNECT_TIMEOUT", 5
    )
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Concurrent card requests write sessions: take the write lock up front and wait for it.
    # WAL lets readers go on while one request writes, and commits without waiting for the
    # disk twice (a crash may lose the last commits, never corrupt the file): sessions and
    # the cache write on most requests.
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    # A file, not memory, for tests (tests/conftest.py names it): Django shares one
    # in-memory connection among a live server's threads, which parallel htmx requests trip.
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / ".test-db.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Sessions live server-side, in the database, so the msal token cache never reaches a
# cookie and any instance can serve any request. Not cached in Redis: a session written or
# deleted (signed out) while Redis is unreachable would come back stale from Redis once it
# answers again. The database cache table always exists (migration 0003 makes it whatever
# REDIS_URL says) and holds what must outlive a Redis restart: staged zip restores (the
# "durable" cache). With Redis, the default cache is Redis, and the database cache stands
# in for it while Redis is unreachable (portal/caches.py).
DATABASE_CACHE = {
    "BACKEND": "django.core.cache.backends.db.DatabaseCache",
    "LOCATION": "portal_cache",
}
REDIS_URL = env("REDIS_URL")
# After a Redis failure, how long the database cache is used before Redis is tried again.
PORTAL_REDIS_RETRY_SECONDS = env_float("PORTAL_REDIS_RETRY_SECONDS", 5.0)
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "portal.caches.RedisWithDatabaseFallback",
            "LOCATION": REDIS_URL,  # rediss:// for TLS (Azure Cache for Redis: port 6380)
            # An unreachable Redis costs at most this, then the fallback (portal/caches.py).
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        },
        "durable": DATABASE_CACHE,
    }
else:
    # The database, not process memory: a staged import or a cached agent list must be
    # there for whichever worker or instance serves the next request.
    CACHES = {"default": DATABASE_CACHE, "durable": DATABASE_CACHE}
SESSION_ENGINE = "portal.sessions"
# Notices can name a person or quote an entry's first line: they wait in the session (on
# the server), not in a cookie that the browser keeps and sends back.
MESSAGE_STORAGE = "django.contrib.messages.storage.session.SessionStorage"
# How often each process checks the database and Redis for /metrics and the log
# (portal/health.py); 0: never. And the Retry-After of the page shown while the database
# does not answer (portal/outages.py).
PORTAL_DEPENDENCY_CHECK_SECONDS = env_float("PORTAL_DEPENDENCY_CHECK_SECONDS", 15.0)
PORTAL_RETRY_AFTER_SECONDS = env_int("PORTAL_RETRY_AFTER_SECONDS", 30)

AUTH_USER_MODEL = "auth.User"
AUTHENTICATION_BACKENDS = ["memory_ui.auth.EntraBackend"]
LOGIN_URL = "auth_login"

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env("DJANGO_STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "portal.staticfiles.StaticFilesStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = DEBUG

# Content-Security-Policy: no inline script or style, nothing from other origins.
# Memory markdown is written by agents from prompts, so it is treated as hostile.
# form-action also allows the origin of ENTRA_AUTHORITY (the sign-out form's redirect to
# the IdP's end-session endpoint), added per response by memory_ui.auth.sign_out_form_action.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF],
    "font-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "form-action": [CSP.SELF, *env_list("ENTRA_FORM_ACTION_ORIGINS")],
    "frame-ancestors": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "object-src": [CSP.NONE],
}


def _devstack(port_variable: str, port: int, scheme: str = "http") -> str:
    """A devstack server's base URL, on the port devstack/config.py gives it (its
    DEVSTACK_*_PORT variable moves both)."""
    return f"{scheme}://127.0.0.1:{int(os.environ.get(port_variable) or port)}"


# --- Microsoft Entra ID (docs/architecture.md, Identity and authorization) ------------
DEVSTACK_TENANT_ID = "3f1b8f5e-6a2c-4d8e-9b7a-5c4d3e2f1a0b"
ENTRA_AUTHORITY = env(
    "ENTRA_AUTHORITY",
    f"{_devstack('DEVSTACK_IDP_PORT', 8443, 'https')}/{DEVSTACK_TENANT_ID}" if DEVSTACK else "",
)
ENTRA_CLIENT_ID = env("ENTRA_CLIENT_ID", "6c9d1e2f-4b3a-4c5d-8e7f-0a1b2c3d4e5f" if DEVSTACK else "")
ENTRA_CLIENT_SECRET = env(
    "ENTRA_CLIENT_SECRET", "devstack-portal-secret-not-for-production" if DEVSTACK else ""
)
# Certificate credential instead of a secret: a PEM private key and its thumbprint.
ENTRA_CLIENT_CERTIFICATE_PATH = env("ENTRA_CLIENT_CERTIFICATE_PATH")
ENTRA_CLIENT_CERTIFICATE_THUMBPRINT = env("ENTRA_CLIENT_CERTIFICATE_THUMBPRINT")
# Federated credential instead of a secret: a file holding a JWT that Entra trusts for the
# app registration, read again for every token (it rotates). AKS workload identity mounts
# one and names it in AZURE_FEDERATED_TOKEN_FILE.
ENTRA_CLIENT_ASSERTION_FILE = env(
    "ENTRA_CLIENT_ASSERTION_FILE", os.environ.get("AZURE_FEDERATED_TOKEN_FILE", "")
)
# Or a user-assigned managed identity as the app registration's federated credential
# (Container Apps): its client id. The portal asks it for a token exchange token.
ENTRA_MANAGED_IDENTITY_CLIENT_ID = env("ENTRA_MANAGED_IDENTITY_CLIENT_ID")
# Empty: built from the request (https://<host>/auth/callback).
ENTRA_REDIRECT_URI = env("ENTRA_REDIRECT_URI")
ENTRA_POST_LOGOUT_REDIRECT_URI = env("ENTRA_POST_LOGOUT_REDIRECT_URI")
# msal's instance discovery only knows Microsoft clouds; off for the devstack.
ENTRA_INSTANCE_DISCOVERY = env_bool("ENTRA_INSTANCE_DISCOVERY", not DEVSTACK)
# A CA bundle to trust for the IdP and CoreAPI (the devstack's dev CA); empty = system CAs.
_devstack_ca = BASE_DIR / ".devstack" / "ca.pem"
PORTAL_CA_BUNDLE = env("PORTAL_CA_BUNDLE", str(_devstack_ca) if DEVSTACK else "")
SUPPORT_ROLE = env("PORTAL_SUPPORT_ROLE", "Memory.Support")
# Whether users see the name of the support staff member on their Activity page.
PORTAL_SHOW_SUPPORT_ACTOR = env_bool("PORTAL_SHOW_SUPPORT_ACTOR", True)

# --- Erasure receipts (docs/operations.md, "Erasure receipts") ------------------------
# The Ed25519 private key (PEM, PKCS#8) that signs every erasure receipt; required in
# production like the other secrets (PORTAL_RECEIPT_SIGNING_KEY_FILE for a mounted one).
# The devstack's own key is public, so its receipts prove nothing.
_DEVSTACK_RECEIPT_KEY = """-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIAUtzF+XgMLKAzQ5TADuHRX7ujS7zcZQpruSMBRx749X
-----END PRIVATE KEY-----"""
PORTAL_RECEIPT_SIGNING_KEY = env(
    "PORTAL_RECEIPT_SIGNING_KEY", _DEVSTACK_RECEIPT_KEY if DEVSTACK or DEBUG else ""
)
# Earlier signing keys' public halves (PEM blocks, one after another), so receipts signed
# before a rotation still verify; the signing key's own public key always does.
PORTAL_RECEIPT_VERIFY_KEYS = env("PORTAL_RECEIPT_VERIFY_KEYS")
try:
    # Read here so a malformed key stops the start-up, not the first deletion request.
    from memory_ui.signatures import private_key, public_keys

    if PORTAL_RECEIPT_SIGNING_KEY:
        private_key(PORTAL_RECEIPT_SIGNING_KEY)
    public_keys(PORTAL_RECEIPT_VERIFY_KEYS)
except ValueError as exc:
    raise ImproperlyConfigured(
        "PORTAL_RECEIPT_SIGNING_KEY must be an Ed25519 private key (PEM, PKCS#8) and "
        f"PORTAL_RECEIPT_VERIFY_KEYS Ed25519 public keys (PEM): {exc}"
    ) from exc

# --- Deleted memory that comes back (docs/operations.md, "Deleted memory that comes back")
# The secret of the keyed hashes (HMAC-SHA256) kept of what a person deletes, so an entry an
# agent writes again is flagged; required in production like the other secrets
# (PORTAL_RESURFACING_KEY_FILE for a mounted one). Changing it makes every kept hash match
# nothing again.
PORTAL_RESURFACING_KEY = env(
    "PORTAL_RESURFACING_KEY", "devstack-only-resurfacing-key" if DEVSTACK or DEBUG else ""
)
# How long those hashes are kept (a suppression list kept to honour erasure), in days.
PORTAL_RESURFACING_RETENTION_DAYS = env_int("PORTAL_RESURFACING_RETENTION_DAYS", 365)

# --- A history per memory (docs/operations.md, "A memory's history") -------------------
# The Fernet keys that encrypt the earlier versions kept of what a person changed, newest
# first, comma-separated (PORTAL_HISTORY_KEYS_FILE for a mounted one): the first encrypts,
# every one decrypts, so a key is rotated by putting a new one in front. Required in
# production like the other secrets.
PORTAL_HISTORY_KEYS = env_list(
    "PORTAL_HISTORY_KEYS",
    # A devstack-only key (a valid Fernet key, never used elsewhere).
    "ZGV2c3RhY2stb25seS1oaXN0b3J5LWtleS0wMDAwMDA=" if DEVSTACK or DEBUG else "",
)
# How long an earlier version is kept, in days, counted from the change that replaced it.
PORTAL_HISTORY_RETENTION_DAYS = env_int("PORTAL_HISTORY_RETENTION_DAYS", 30)
try:
    # Read here so a malformed key stops the start-up, not the first edit.
    from cryptography.fernet import Fernet

    for _history_key in PORTAL_HISTORY_KEYS:
        Fernet(_history_key)
except ValueError as exc:
    raise ImproperlyConfigured(
        "PORTAL_HISTORY_KEYS must be Fernet keys (32 url-safe base64-encoded bytes), "
        "newest first, comma-separated."
    ) from exc

# How long a tenant-wide job's progress row (a person's UPN and counts) is kept, in days,
# after its last write (docs/operations.md, "Moving a whole tenant").
PORTAL_JOB_PROGRESS_RETENTION_DAYS = env_int("PORTAL_JOB_PROGRESS_RETENTION_DAYS", 90)

# --- Memory sources: each one's package, in page order (docs/architecture.md) ---------
# Each source that needs a base URL (legacy, memoryos, memory_api) is off without one, as in
# production by default; the devstack sets its emulators' URLs.
_SOURCES = ",".join(
    f"memory_ui.sources.{name}"
    for name in ("coreapi", "legacy", "memoryos", "memory_api", "agent_notes")
)
PORTAL_MEMORY_SOURCES = env_list("PORTAL_MEMORY_SOURCES", _SOURCES)

# --- Legacy memory stores (seed 003; docs/legacy-stores.md) ---------------------------
# Off unless LEGACY_STORES_BASE_URL is set (the devstack sets its emulator). The portal
# calls them as its own service principal (client credentials for LEGACY_STORES_TOKEN_SCOPE:
# the Azure Databricks resource); `scope` comes from the verified identity by the template
# ({upn}, {oid}); LEGACY_STORES_AGENTS maps agent names to stores, as a JSON object.
LEGACY_STORES_BASE_URL = env(
    "LEGACY_STORES_BASE_URL", _devstack("DEVSTACK_LEGACY_PORT", 8002) if DEVSTACK else ""
)
LEGACY_STORES_TOKEN_SCOPE = env(
    "LEGACY_STORES_TOKEN_SCOPE", "2ff814a6-3304-4ab8-85cb-cd0e6f879c1d/.default"
)
LEGACY_STORES_SCOPE_TEMPLATE = env("LEGACY_STORES_SCOPE_TEMPLATE", "{upn}")
LEGACY_STORES_AGENTS = env(
    "LEGACY_STORES_AGENTS",
    '{"travel-planner": "main.agents.travel_planner_memory",'
    ' "it-helpdesk": "main.agents.it_helpdesk_memory",'
    ' "benefits-assistant": "main.agents.benefits_assistant_memory"}'
    if DEVSTACK
    else "{}",
)
# The stores the portal knows of, reachable or not, each with whom to ask about it (JSON:
# store full name -> owner): a deletion request names every one it cannot reach, with its
# owner. The devstack's names every store of its demo data (devstack/legacy/fixtures.toml).
LEGACY_STORES_KNOWN = env(
    "LEGACY_STORES_KNOWN",
    '{"main.agents.travel_planner_memory": "agents-platform@contoso.com",'
    ' "main.agents.it_helpdesk_memory": "agents-platform@contoso.com",'
    ' "main.agents.benefits_assistant_memory": "hr-platform@contoso.com",'
    ' "main.finance.finance_insights_memory": "finance-platform@contoso.com"}'
    if DEVSTACK
    else "{}",
)
# Whom to ask about stores nobody told the portal of: the stores service lists only those
# the portal may read, so a deletion request says other stores may exist, and whom to ask.
LEGACY_STORES_CONTACT = env(
    "LEGACY_STORES_CONTACT", "agents-platform@contoso.com" if DEVSTACK else ""
)
LEGACY_STORES_CONNECT_TIMEOUT = env_float("LEGACY_STORES_CONNECT_TIMEOUT", 3.05)
LEGACY_STORES_READ_TIMEOUT = env_float("LEGACY_STORES_READ_TIMEOUT", 10.0)
LEGACY_STORES_GET_RETRIES = env_int("LEGACY_STORES_GET_RETRIES", 2)
LEGACY_STORES_CA_BUNDLE = env("LEGACY_STORES_CA_BUNDLE", PORTAL_CA_BUNDLE)

# --- MemoryOS (seed 002; docs/memoryos.md) --------------------------------------------
# Off unless MEMORYOS_BASE_URL is set (the devstack sets its emulator; the default
# PORTAL_MEMORY_SOURCES names memory_ui.sources.memoryos). The tenant's API key comes
# from the secrets store (MEMORYOS_API_KEY_FILE); `external_user_id` from the verified
# identity by the template ({oid}, {upn}); MEMORYOS_AGENTS maps agent ids to titles (JSON).
MEMORYOS_BASE_URL = env(
    "MEMORYOS_BASE_URL", _devstack("DEVSTACK_MEMORYOS_PORT", 8004) if DEVSTACK else ""
)
MEMORYOS_API_KEY = env(
    "MEMORYOS_API_KEY", "mem_live_devstack_contoso_4f7c2a9e61b84d03" if DEVSTACK else ""
)
MEMORYOS_USER_ID_TEMPLATE = env("MEMORYOS_USER_ID_TEMPLATE", "{oid}")
MEMORYOS_AGENTS = env(
    "MEMORYOS_AGENTS",
    '{"travel-planner": "Travel Planner", "it-helpdesk": "IT Helpdesk"}' if DEVSTACK else "{}",
)
# Whom a deletion request names for erasure, which the service offers no API for.
MEMORYOS_CONTACT = env("MEMORYOS_CONTACT", "")
MEMORYOS_CONNECT_TIMEOUT = env_float("MEMORYOS_CONNECT_TIMEOUT", 3.05)
MEMORYOS_READ_TIMEOUT = env_float("MEMORYOS_READ_TIMEOUT", 10.0)
MEMORYOS_RETRIES = env_int("MEMORYOS_RETRIES", 2)
MEMORYOS_CA_BUNDLE = env("MEMORYOS_CA_BUNDLE", PORTAL_CA_BUNDLE)
# --- Workspace memory-api (seed 001; docs/memory-api.md) ------------------------------
# Off unless MEMORY_API_BASE_URL is set, and read only when PORTAL_MEMORY_SOURCES names
# memory_ui.sources.memory_api. The portal calls it as an exact-listed system service with
# the projected ServiceAccount token in MEMORY_API_TOKEN_FILE (re-read when it rotates);
# MEMORY_API_WORKSPACE_UID must be the Workspace's UID; virtual_user_id comes from the
# verified identity by MEMORY_API_SUBJECT_RULE: a template over {oid} and {upn}, or
# hmac-sha256 (of the oid, keyed by the secret in MEMORY_API_PSEUDONYM_KEY_FILE).
# Where the devstack keeps its state (devstack/config.py: DEVSTACK_HOME moves it).
_devstack_state = Path(env("DEVSTACK_HOME", str(BASE_DIR / ".devstack")))
# The devstack writes its pseudonym key before it starts the portal; a process started
# before that (`manage.py devstack` itself, on a fresh clone) runs without the memory-api
# rather than failing the start-up check on a key not written yet.
_devstack_memory_api = DEVSTACK and (_devstack_state / "memory-api-pseudonym-key").exists()
MEMORY_API_BASE_URL = env(
    "MEMORY_API_BASE_URL",
    _devstack("DEVSTACK_MEMORY_API_PORT", 8003) if _devstack_memory_api else "",
)
MEMORY_API_WORKSPACE_UID = env(
    "MEMORY_API_WORKSPACE_UID", "7f3c2a10-5b4d-4e6f-8a9b-0c1d2e3f4a5b" if DEVSTACK else ""
)
MEMORY_API_TOKEN_FILE = env(
    "MEMORY_API_TOKEN_FILE",
    str(_devstack_state / "memory-api-portal-token")
    if DEVSTACK
    else "/var/run/secrets/tokens/memory-api",
)
MEMORY_API_SUBJECT_RULE = env("MEMORY_API_SUBJECT_RULE", "hmac-sha256" if DEVSTACK else "{oid}")
MEMORY_API_PSEUDONYM_KEY_FILE = env(
    "MEMORY_API_PSEUDONYM_KEY_FILE",
    str(_devstack_state / "memory-api-pseudonym-key") if DEVSTACK else "",
)
# Microsoft Graph, to resolve a UPN to its object id (support acting for a person whose
# memory-api pseudonym or legacy scope is made from the oid); the devstack IdP serves the one
# call. Empty: off.
GRAPH_BASE_URL = env(
    "GRAPH_BASE_URL",
    _devstack("DEVSTACK_IDP_PORT", 8443, "https") if DEVSTACK else "https://graph.microsoft.com",
)
GRAPH_SCOPE = env("GRAPH_SCOPE", "https://graph.microsoft.com/.default")
MEMORY_API_CONNECT_TIMEOUT = env_float("MEMORY_API_CONNECT_TIMEOUT", 3.05)
MEMORY_API_READ_TIMEOUT = env_float("MEMORY_API_READ_TIMEOUT", 10.0)
MEMORY_API_GET_RETRIES = env_int("MEMORY_API_GET_RETRIES", 2)

# --- FoundationaLLM CoreAPI -----------------------------------------------------------
COREAPI_BASE_URL = env(
    "COREAPI_BASE_URL", _devstack("DEVSTACK_COREAPI_PORT", 8001) if DEVSTACK else ""
)
COREAPI_INSTANCE_ID = env(
    "COREAPI_INSTANCE_ID", "00000000-0000-0000-0000-000000000000" if DEVSTACK else ""
)
COREAPI_SCOPE = env("COREAPI_SCOPE", "api://FoundationaLLM-Core/Data.Read")
COREAPI_APP_SCOPE = env("COREAPI_APP_SCOPE", "api://FoundationaLLM-Core/.default")
COREAPI_CONNECT_TIMEOUT = env_float("COREAPI_CONNECT_TIMEOUT", 3.05)
COREAPI_READ_TIMEOUT = env_float("COREAPI_READ_TIMEOUT", 10.0)
COREAPI_GET_RETRIES = env_int("COREAPI_GET_RETRIES", 2)
# All CoreAPI calls of one portal request end within this (retries included): a slow
# CoreAPI holds a worker thread this long at most. Above COREAPI_READ_TIMEOUT.
PORTAL_REQUEST_DEADLINE_SECONDS = env_float("PORTAL_REQUEST_DEADLINE_SECONDS", 12.0)
# CoreAPI calls one process makes at a time (below gunicorn's threads, so requests that need
# no CoreAPI, like health probes, always find a thread), and how long a call waits for a turn.
COREAPI_MAX_CONCURRENT = env_int("COREAPI_MAX_CONCURRENT", 8)
COREAPI_QUEUE_TIMEOUT = env_float("COREAPI_QUEUE_TIMEOUT", 1.0)
# CoreAPI's limit on a request body: a replace larger than this is refused before sending.
COREAPI_MAX_BODY_BYTES = env_int("COREAPI_MAX_BODY_BYTES", 2 * 1024 * 1024)
COREAPI_CA_BUNDLE = env("COREAPI_CA_BUNDLE", PORTAL_CA_BUNDLE)
# CoreAPI calls one request makes at a time when it reads or exports many memories.
PORTAL_COREAPI_FAN_OUT = env_int("PORTAL_COREAPI_FAN_OUT", 8)
# Search and "Export everything" ask every memory system at once, each within this (and the
# request's deadline): one that takes longer is named as not answering, the rest are shown.
PORTAL_SOURCE_DEADLINE_SECONDS = env_float("PORTAL_SOURCE_DEADLINE_SECONDS", 10.0)
# How long the user's agent list is reused between card requests.
PORTAL_AGENTS_CACHE_SECONDS = env_int("PORTAL_AGENTS_CACHE_SECONDS", 60)
# How long a worker trusts the signed-in user's row before reading it again: a user made
# inactive or deleted loses access within this time (memory_ui/active_users.py).
PORTAL_USER_RECHECK_SECONDS = env_int("PORTAL_USER_RECHECK_SECONDS", 30)
# Parsed and rendered memory documents, kept per worker process by content hash
# (memory_ui.documents.paging): how long after their last view, and about how many bytes.
PORTAL_RENDER_CACHE_SECONDS = env_int("PORTAL_RENDER_CACHE_SECONDS", 300)
PORTAL_RENDER_CACHE_BYTES = env_int("PORTAL_RENDER_CACHE_BYTES", 16 * 1024 * 1024)
# Largest markdown import (file or pasted); an "Export everything" zip may be 10 times this.
PORTAL_UPLOAD_MAX_BYTES = env_int("PORTAL_UPLOAD_MAX_BYTES", 1024 * 1024)
# Region (ISO 3166 alpha-2) for phone numbers in memory written without a country code;
# empty: only numbers written with "+country code" are flagged as sensitive.
PORTAL_PHONE_REGION = env("PORTAL_PHONE_REGION", "US").upper() or None

# Request bodies. A file bigger than any import the portal takes is skipped, not stored
# (memory_ui.web.upload_handler.CappedUploadHandler). Form fields may carry a whole document, which a
# urlencoded post percent-encodes to up to 3 times its size, and the editor posts two (the
# draft and the version it started from), each up to what CoreAPI takes in one write.
FILE_UPLOAD_HANDLERS = [
    "memory_ui.web.upload_handler.CappedUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]
DATA_UPLOAD_MAX_MEMORY_SIZE = 6 * max(PORTAL_UPLOAD_MAX_BYTES, COREAPI_MAX_BODY_BYTES) + 65_536
DATA_UPLOAD_MAX_NUMBER_FILES = 10

# /metrics (portal/metrics.py) answers only with `Authorization: Bearer <this>`; unset: 404.
PORTAL_METRICS_TOKEN = env("PORTAL_METRICS_TOKEN")
# OpenTelemetry to Azure Monitor when set (portal/telemetry.py).
APPLICATIONINSIGHTS_CONNECTION_STRING = env("APPLICATIONINSIGHTS_CONNECTION_STRING")

# One JSON object per line in production (portal/logs.py), each with its request's id;
# plain text for people reading a terminal. Never tokens or memory content.
PORTAL_LOG_FORMAT = env("PORTAL_LOG_FORMAT", "plain" if DEBUG else "json")
if PORTAL_LOG_FORMAT not in ("json", "plain"):
    raise ImproperlyConfigured(
        f"PORTAL_LOG_FORMAT must be json or plain, not {PORTAL_LOG_FORMAT!r}."
    )
LOGGING_CONFIG = "portal.logs.configure"
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "portal.logs.RequestIdFilter"}},
    "formatters": {
        "json": {"()": "portal.logs.JsonFormatter"},
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": PORTAL_LOG_FORMAT,
            "filters": ["request_id"],
        }
    },
    "root": {"handlers": ["console"], "level": env("PORTAL_LOG_LEVEL", "INFO")},
    "loggers": {
        # Django's own handlers (a DEBUG-only console, mail_admins) off: the root's only.
        "django": {"handlers": [], "propagate": True},
        "msal": {"level": "WARNING"},
        "urllib3": {"level": "WARNING"},
        # Azure Monitor's exporter reports every upload at INFO.
        "azure": {"level": "WARNING"},
    },
}
