"""resolver/calendars/caldav/connections.py: a person's account connects only to the address its check saw.

With the policy on (`check_addresses=True`) the request goes to the checked
address asking for the name, TLS verifies the name (SNI and certificate), and
a same-origin redirect is checked again on its new connection. DNS is faked in
process (tests/support/network.py); loopback addresses stand for public and
private hosts. The address policy itself is in tests/accounts/test_addresses.py.
"""
from __future__ import annotations

import pytest

from resolver.calendars.caldav import addresses
from tests.support.network import FakeDNS, Listener


def test_connection__pinned_to_the_checked_address_with_the_name_in_host(monkeypatch):
    """With the policy on, the request goes to the address the check saw, asking for the name."""
    from resolver.calendars.caldav import CalDAVAccount
    from resolver.calendars.caldav.http import DAVClient, Transport

    monkeypatch.setattr(addresses, "_public", lambda address: True)  # let loopback stand for a public host
    with Listener() as listener:
        dns = FakeDNS({"dav.example": ["127.0.0.1"]})
        with dns.installed():
            client = DAVClient(CalDAVAccount(url=f"http://dav.example:{listener.port}/", check_addresses=True))
            with pytest.raises(Exception):
                Transport(client, timeout=0.5, max_bytes=1000).propfind("/", b"<x/>", depth=0)
    assert listener.connections >= 1 and not dns.public_connects
    assert f"Host: dav.example:{listener.port}".encode() in listener.received


# --- TLS: connected to the checked address, verified as the name -------------------------------------


def _certificate(tmp_path, name: str):
    """A self-signed certificate for `name` (its own CA), as PEM files."""
    import datetime as dt

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = tmp_path / f"{name}.crt", tmp_path / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


class _TLSServer:
    """HTTPS on 127.0.0.1 answering every request 207 with an empty multistatus; records SNI and Host."""

    def __init__(self, cert_path, key_path) -> None:
        import ssl
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.sni: list[str | None] = []
        self.hosts: list[str | None] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_PROPFIND(self):
                server.hosts.append(self.headers.get("Host"))
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = b'<?xml version="1.0"?><D:multistatus xmlns:D="DAV:"/>'
                self.send_response(207)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_path, key_path)
        context.sni_callback = lambda sock, name, ctx: self.sni.append(name)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.parametrize("certified, ok", [("dav.example", True), ("other.example", False)])
def test_tls__pinned_address_but_sni_and_certificate_are_the_names(tmp_path, monkeypatch, certified, ok):
    from resolver.calendars.caldav import CalDAVAccount
    from resolver.calendars.caldav.http import DAVClient, Transport
    from resolver.domain.errors import CalendarUnavailable

    monkeypatch.setattr(addresses, "_public", lambda address: True)  # loopback stands for a public host
    cert_path, key_path = _certificate(tmp_path, certified)
    server = _TLSServer(cert_path, key_path)
    try:
        dns = FakeDNS({"dav.example": ["127.0.0.1"]})
        with dns.installed():
            client = DAVClient(CalDAVAccount(url=f"https://dav.example:{server.port}/", check_addresses=True))
            client._session().verify = str(cert_path)  # trust this test's own CA
            transport = Transport(client, timeout=5, max_bytes=10_000)
            if ok:
                assert transport.propfind("/", b"<x/>", depth=0).status == 207
            else:
                with pytest.raises(CalendarUnavailable):
                    transport.propfind("/", b"<x/>", depth=0)
        client.close()
    finally:
        server.stop()
    assert dns.lookups and all(name == "dav.example" for name in dns.lookups)
    assert "dav.example" in server.sni  # SNI asks for the name, not the address connected to
    if ok:
        assert server.hosts == [f"dav.example:{server.port}"]
    else:
        assert server.hosts == []  # the certificate did not match the name: nothing was sent


def test_redirect__a_same_origin_redirect_is_checked_again(monkeypatch):
    """The name answers 127.0.0.1 (standing for a public address) to the first request and 127.0.0.2
    (standing for a private one) to the redirected one: the redirect is refused, .2 gets nothing."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from resolver.calendars.caldav import CalDAVAccount
    from resolver.calendars.caldav.http import DAVClient, Transport
    from resolver.domain.errors import CalendarUnavailable

    monkeypatch.setattr(addresses, "_public", lambda address: str(address) == "127.0.0.1")
    seen: list[str] = []

    class Redirect(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_PROPFIND(self):
            seen.append(self.path)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(301)
            self.send_header("Location", "/moved/")
            self.send_header("Content-Length", "0")
            self.send_header("Connection", "close")  # the redirected request needs a new connection
            self.end_headers()

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    port = httpd.server_address[1]
    inner = Listener.on("127.0.0.2", port)
    try:
        with inner, FakeDNS({"dav.example": ["127.0.0.1", "127.0.0.2"]}).installed():
            client = DAVClient(CalDAVAccount(url=f"http://dav.example:{port}/", check_addresses=True))
            with pytest.raises(CalendarUnavailable) as caught:
                Transport(client, timeout=2, max_bytes=1000).propfind("/", b"<x/>", depth=0)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert seen == ["/"] and caught.value.details["reason"] == "address_not_allowed"
    assert inner.untouched
