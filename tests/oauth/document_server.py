"""A client's metadata document host on 127.0.0.1, over TLS with a certificate for the name it stands for.

    with DocumentServer(tmp_path, "agent.example", mode="trickle_body") as server:
        ...   # DNS faked so that agent.example is 127.0.0.1 (tests/support/network.py)

Modes: "document" answers the document at once; "trickle_body" sends the
status line and headers at once, then the body a byte every `interval`;
"trickle_headers" sends the status line and headers a byte at a time;
"trickle_handshake" answers the TLS ClientHello a byte at a time. `cut` is
set when the client hung up while the server still had bytes to send (what
a bound on the whole fetch does), `connections` counts the TCP connections.
"""
from __future__ import annotations

import datetime as dt
import json
import socket
import ssl
import threading
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from resolver.oauth.documents import DocumentFetcher
from tests.support.slow_peers import LoopbackPeer


def certificate(folder: Path, name: str) -> tuple[Path, Path]:
    """A self-signed certificate for `name` (its own CA), as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / f"{name}.crt", folder / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


class TrustingFetcher(DocumentFetcher):
    """The site's fetcher, trusting one more CA: the test server's (set `cafile`)."""

    cafile: str = ""

    def ssl_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=self.cafile)


def document(client_id: str, callback: str, name: str = "Hosted agent") -> dict[str, Any]:
    return {"client_id": client_id, "client_name": name, "redirect_uris": [callback],
            "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"]}


class DocumentServer(LoopbackPeer):
    TLS_RECORD = b"\x16\x03\x03\x40\x00" + b"\x02" * 1000

    def __init__(self, folder: Path, name: str, *, mode: str = "document", interval: float = 0.3,
                 body: bytes | None = None) -> None:
        self.name = name
        self.mode = mode
        self.interval = interval
        self.cert_path, self.key_path = certificate(folder, name)
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(self.cert_path, self.key_path)
        self.sni: list[str | None] = []
        self.context.sni_callback = lambda sock, server_name, ctx: self.sni.append(server_name)
        super().__init__()
        self.client_id = f"https://{name}:{self.port}/oauth/client.json"
        self.callback = f"https://{name}/callback"
        self.body = body if body is not None else json.dumps(document(self.client_id, self.callback)).encode()
        self.received: list[bytes] = []  # each request's head, as it came
        self.answered = threading.Event()

    def _trickle(self, conn: Any, data: bytes) -> bool:
        for byte in data:
            if self._stop.wait(self.interval):
                return False
            conn.sendall(bytes([byte]))
        return True

    @property
    def requests(self) -> list[bytes]:  # type: ignore[override]
        return self.received

    def _answer(self, conn: socket.socket) -> None:
        conn.settimeout(30)
        try:
            if self.mode == "trickle_handshake":
                conn.recv(65536)  # the ClientHello
                self._trickle(conn, self.TLS_RECORD)
                return
            tls = self.context.wrap_socket(conn, server_side=True)
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = tls.recv(65536)
                if not chunk:
                    return
                request += chunk
            self.received.append(request)
            head = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nCache-Control: max-age=600\r\n"
                    b"Content-Length: " + str(len(self.body)).encode() + b"\r\nConnection: close\r\n\r\n")
            if self.mode == "trickle_headers":
                self._trickle(tls, head + self.body)
            elif self.mode == "trickle_body":
                tls.sendall(head)
                self._trickle(tls, self.body)
            else:
                tls.sendall(head + self.body)
                self.answered.set()
            tls.close()
        except (OSError, ssl.SSLError):
            self.cut.set()  # the client ended the exchange while bytes were still coming
        finally:
            conn.close()

