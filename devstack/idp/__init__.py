"""Entra-shaped OpenID Connect provider for development (https on 127.0.0.1:8443)."""

from devstack.idp.app import IdentityProvider, provider, start

__all__ = ["IdentityProvider", "provider", "start"]
