import json
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from devstack import tokens
from devstack.config import fixtures, idp_base_url, issuer, state_dir
from devstack.legacy.store import audience as legacy_audience
from devstack.memory_api import identity as memory_api
from devstack.memoryos import store as memoryos
from devstack.pki import Pki, ensure_pki


class Command(BaseCommand):
    help = "Print a CoreAPI access token from the devstack IdP's key (the last line of output)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("upn", nargs="?", help="A demo user, e.g. alice@contoso.com.")
        parser.add_argument(
            "--app",
            action="store_true",
            help="An app-only token of the portal's service principal instead.",
        )
        parser.add_argument(
            "--legacy",
            action="store_true",
            help="The portal service principal's token for the legacy memory stores.",
        )
        parser.add_argument(
            "--memoryos",
            action="store_true",
            help="MemoryOS API keys, demo users' external_user_ids and agent ids, as one JSON line.",
        )
        parser.add_argument(
            "--memory-api",
            action="store_true",
            help="A ServiceAccount token for the workspace memory-api (default: the portal's).",
        )
        parser.add_argument(
            "--as",
            dest="account",
            choices=("portal", "runtime", "outsider"),
            default="portal",
            help="With --memory-api: the portal (exact-listed), the runtime (trusted by "
            "namespace only) or an outsider (not allowed).",
        )
        parser.add_argument(
            "--subject-proof",
            metavar="UPN",
            help="With --memory-api: also a subject proof (X-Omnia-Subject-Proof) for this user.",
        )
        parser.add_argument(
            "--json",
            action="store_true",
            help="With --memory-api: print token, proof, workspace and virtual_user_ids as JSON. "
            "With --memoryos: the same JSON line as without it.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["memoryos"]:
            self.stdout.write(json.dumps(memoryos_credentials()))
            return
        demo = fixtures()
        pki = ensure_pki(state_dir())
        if options["memory_api"]:
            self._memory_api(pki, options)
            return
        token_issuer = issuer(idp_base_url(), demo.tenant_id)
        if options["legacy"]:
            self.stdout.write(
                tokens.app_access_token(
                    pki, demo, token_issuer, demo.portal, audience=legacy_audience()
                )
            )
            return
        if options["app"]:
            self.stdout.write(tokens.app_access_token(pki, demo, token_issuer, demo.portal))
            return
        if not options["upn"]:
            raise CommandError("Give a user (e.g. alice@contoso.com) or --app.")
        user = demo.user(options["upn"])
        if user is None:
            known = ", ".join(u.upn for u in demo.users)
            raise CommandError(f"No demo user {options['upn']!r}. Known users: {known}.")
        self.stdout.write(tokens.delegated_access_token(pki, demo, token_issuer, user, demo.portal))

    def _memory_api(self, pki: Pki, options: dict[str, Any]) -> None:
        settings = memory_api.load_settings()
        token = memory_api.service_account_token(
            pki, settings, settings.accounts[options["account"]]
        )
        proof = None
        if options["subject_proof"]:
            try:
                user = settings.virtual_user_id(options["subject_proof"])
            except KeyError as exc:
                known = ", ".join(u.upn for u in fixtures().users)
                raise CommandError(f"No demo user {exc}. Known users: {known}.") from exc
            proof = memory_api.subject_proof(pki, settings, user)
        if not options["json"]:
            self.stdout.write(token if proof is None else f"{token}\n{proof}")
            return
        result: dict[str, Any] = {"token": token}
        if proof is not None:
            result["proof"] = proof
        result |= {
            "workspace_uid": settings.workspace.uid,
            "workspace_name": settings.workspace.name,
            "virtual_user_ids": settings.virtual_user_ids(),
        }
        self.stdout.write(json.dumps(result))


def memoryos_credentials() -> dict[str, Any]:
    """What a MemoryOS client of the devstack needs (docs/memoryos.md, The devstack emulator)."""
    return {
        "api_key": memoryos.tenant("contoso").api_key,
        "other_tenant_api_key": memoryos.tenant("fabrikam").api_key,
        "passthrough_api_key": memoryos.tenant("northwind").api_key,
        "external_user_ids": memoryos.tenant("contoso").users,
        "agent_ids": memoryos.agent_ids("contoso"),
    }
