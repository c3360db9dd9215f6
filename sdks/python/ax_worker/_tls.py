"""TLS (mTLS) settings of a worker, and how endpoints are read."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional, Union
from urllib.parse import urlsplit

__all__ = ["Tls"]

#: PEM text (str or bytes), or the path of a PEM file (os.PathLike, or a str that does not contain
#: "-----BEGIN").
PemSource = Union[str, bytes, "os.PathLike[str]"]


def _load(source: Optional[PemSource], what: str) -> Optional[bytes]:
    if source is None:
        return None
    if isinstance(source, bytes):
        return source
    if isinstance(source, str) and "-----BEGIN" in source:
        return source.encode("ascii")
    try:
        with open(os.fspath(source), "rb") as f:
            return f.read()
    except OSError as e:
        raise ValueError(f"tls.{what}: cannot read {source!s}: {e}") from None


@dataclass(frozen=True)
class Tls:
    """TLS for `https://` endpoints; with `cert_pem` and `key_pem`, mutual TLS.

    Each field takes PEM text (str or bytes) or the path of a PEM file (a pathlib.Path, or a str
    without "-----BEGIN"); `Tls.from_files` is the same with paths only.

    - `ca_pem`: the CA that signed axd's certificate; None trusts the system's roots.
    - `cert_pem`, `key_pem`: this worker's certificate (its identity must be
      `spiffe://<trust domain>/worker/<app>` for the app it serves) and private key. Give both or
      neither.
    - `server_name`: the name to check axd's certificate against, when it differs from the host
      in the endpoint (grpc's ``grpc.ssl_target_name_override``).
    """

    ca_pem: Optional[PemSource] = None
    cert_pem: Optional[PemSource] = None
    key_pem: Optional[PemSource] = None
    server_name: Optional[str] = None

    @classmethod
    def from_files(cls, ca: Optional[PemSource] = None, cert: Optional[PemSource] = None,
                   key: Optional[PemSource] = None, server_name: Optional[str] = None) -> "Tls":
        """TLS settings from PEM files (read when the worker connects)."""
        return cls(ca_pem=ca, cert_pem=cert, key_pem=key, server_name=server_name)

    def load(self) -> tuple[Optional[bytes], Optional[bytes], Optional[bytes]]:
        """(root certificates, private key, certificate chain) as grpc wants them. Raises
        ValueError if a file cannot be read or only one of cert and key is given."""
        if (self.cert_pem is None) != (self.key_pem is None):
            raise ValueError("tls: give both cert_pem and key_pem (mutual TLS) or neither")
        return _load(self.ca_pem, "ca_pem"), _load(self.key_pem, "key_pem"), _load(self.cert_pem, "cert_pem")


@dataclass(frozen=True)
class Endpoint:
    """One axd endpoint: grpc's target (host:port) and whether it speaks TLS."""

    url: str
    target: str
    secure: bool


def parse_endpoint(url: str, tls: Optional[Tls]) -> Endpoint:
    """Reads `http://host:port` (plaintext), `https://host:port` (TLS) or `host:port` (TLS if
    `tls` is given). Raises ValueError for anything else."""
    raw = url.strip()
    if "://" in raw:
        parts = urlsplit(raw)
        if parts.scheme not in ("http", "https"):
            raise ValueError(f"endpoint {url!r}: the scheme must be http or https")
        if not parts.netloc or parts.path not in ("", "/") or parts.query or parts.fragment:
            raise ValueError(f"endpoint {url!r}: expected http(s)://host:port")
        secure = parts.scheme == "https"
        if not secure and tls is not None:
            raise ValueError(f"endpoint {url!r}: plaintext (http://) although tls is configured; use https://")
        host = parts.netloc
    else:
        host, secure = raw.rstrip("/"), tls is not None
    if not host or host.startswith(":"):
        raise ValueError(f"endpoint {url!r}: no host")
    if ":" not in host.rsplit("]", 1)[-1]:
        raise ValueError(f"endpoint {url!r}: no port (expected host:port, e.g. http://127.0.0.1:7070)")
    return Endpoint(url=url, target=host, secure=secure)
