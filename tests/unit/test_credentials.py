"""Which credential the portal gives msal for its app registration: a federated token
(workload identity's file, or a managed identity's token), a certificate or a secret."""

from __future__ import annotations

import pytest

from memory_ui import auth


@pytest.fixture(autouse=True)
def no_credentials(settings):
    settings.ENTRA_CLIENT_ASSERTION_FILE = ""
    settings.ENTRA_MANAGED_IDENTITY_CLIENT_ID = ""
    settings.ENTRA_CLIENT_CERTIFICATE_PATH = ""
    settings.ENTRA_CLIENT_SECRET = "a-secret"
    auth.reset_caches()
    yield
    auth.reset_caches()


def test_a_secret_when_nothing_else_is_set():
    assert auth._client_credential() == "a-secret"


def test_the_federated_token_file_is_read_for_every_token(settings, tmp_path):
    token_file = tmp_path / "azure-identity-token"
    token_file.write_text("first.jwt\n")
    settings.ENTRA_CLIENT_ASSERTION_FILE = str(token_file)
    assertion = auth._client_credential()["client_assertion"]
    assert assertion() == "first.jwt"
    token_file.write_text("rotated.jwt")  # the kubelet rotates it
    assert assertion() == "rotated.jwt"


def test_a_managed_identity_token_for_the_token_exchange(settings, monkeypatch):
    settings.ENTRA_MANAGED_IDENTITY_CLIENT_ID = "mi-client-id"
    asked: list[str] = []

    class FakeManagedIdentity:
        def acquire_token_for_client(self, *, resource: str) -> dict:
            asked.append(resource)
            return {"access_token": "mi.jwt"} if len(asked) == 1 else {"error": "no_identity"}

    with monkeypatch.context() as patch:
        patch.setattr(auth, "_managed_identity", FakeManagedIdentity)
        assertion = auth._client_credential()["client_assertion"]
        assert assertion() == "mi.jwt"
        assert asked == ["api://AzureADTokenExchange"]
        with pytest.raises(ValueError, match="no_identity"):
            assertion()
