"""Dev CA, the IdP's https certificate and the token signing key, made on first run."""

from __future__ import annotations

import base64
import datetime as dt
import fcntl
import hashlib
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from devstack.config import state_dir


@dataclass(frozen=True)
class Pki:
    ca_cert: Path  # trust this (msal, requests) to reach the IdP over https
    server_cert: Path  # chain: server certificate then CA
    server_key: Path
    signing_key: Path  # RS256 key the IdP signs tokens with

    @property
    def kid(self) -> str:
        return signing_kid(self.signing_key)


def _new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _pem_key(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _write_private(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    tmp.replace(path)


def _make_ca() -> tuple[rsa.RSAPrivateKey, x509.Certificate]:
    key = _new_key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Memory Portal devstack CA")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def _make_server_cert(
    ca_key: rsa.RSAPrivateKey, ca_cert: x509.Certificate
) -> tuple[rsa.RSAPrivateKey, x509.Certificate]:
    key = _new_key()
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=825))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return key, cert


def ensure_pki(directory: Path | None = None) -> Pki:
    """Create the CA, server certificate and signing key once; later calls reuse them.

    A file lock keeps the IdP and the emulator, started together, from each making a CA.
    """
    directory = directory or state_dir()
    directory.mkdir(parents=True, exist_ok=True)
    pki = Pki(
        ca_cert=directory / "ca.pem",
        server_cert=directory / "server.pem",
        server_key=directory / "server-key.pem",
        signing_key=directory / "signing-key.pem",
    )
    with (directory / ".pki.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (pki.ca_cert.exists() and pki.server_cert.exists() and pki.server_key.exists()):
            ca_key, ca_cert = _make_ca()
            server_key, server_cert = _make_server_cert(ca_key, ca_cert)
            ca_pem = ca_cert.public_bytes(serialization.Encoding.PEM)
            _write_private(pki.server_key, _pem_key(server_key))
            _write_private(
                pki.server_cert, server_cert.public_bytes(serialization.Encoding.PEM) + ca_pem
            )
            _write_private(pki.ca_cert, ca_pem)
        if not pki.signing_key.exists():
            _write_private(pki.signing_key, _pem_key(_new_key()))
    return pki


def load_signing_key(path: Path) -> rsa.RSAPrivateKey:
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    assert isinstance(key, rsa.RSAPrivateKey)
    return key


def signing_kid(path: Path) -> str:
    """Key id: base64url SHA-256 of the public key, stable for the life of the key."""
    public = load_signing_key(path).public_key()
    der = public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()[:16]).rstrip(b"=").decode()
