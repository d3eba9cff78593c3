"""Fetching a Client ID Metadata Document: the account connection policy, one wall-clock bound in all.

django-oauth-toolkit's own fetcher bounds each socket operation, not the
fetch: a server sending its document a byte every two seconds never lets a
read time out, and held the authorize page a minute against a five-second
setting. And it judges addresses by the interpreter's `ipaddress` flags. This
fetcher (OAUTH2_PROVIDER["CIMD_METADATA_FETCHER"]):

1. checks the URL as the toolkit does (https, a host, a path; no userinfo,
   fragment or dot segments);
2. spells the host once and resolves it once under the policy a person's
   CalDAV account uses (`resolver.calendars.caldav.addresses`: one module,
   one table), refusing unless every address is allowed, and connects to the
   address it checked, with the name for SNI, the certificate and `Host`;
3. bounds the whole exchange, TCP connect, TLS handshake, status line,
   headers and body, by CIMD_FETCH_TIMEOUT_SECONDS from its start: a timer
   shuts the socket down when it passes, whichever phase is waiting, and a
   document cut off is refused, never read in part;
4. then reads the document as the toolkit does (200, a JSON media type, at
   most CIMD_MAX_DOCUMENT_SIZE bytes, an object; its Cache-Control).

The name lookup itself is the system resolver's and is not under the timer
(as for accounts). Every failure is a CIMDError: the toolkit then treats the
client as unknown and backs the URL off.
"""
from __future__ import annotations

import http.client
import socket
import ssl
import threading
import time
from typing import Any

from oauth2_provider import cimd
from oauth2_provider.settings import oauth2_settings

from resolver.calendars.caldav import addresses
from resolver.oauth import clients

_SHUTDOWN = socket.socket.shutdown  # the plain socket's, also for a TLS socket (no TLS close_notify dance)


class _Cut:
    """Shuts the exchange's socket down once, at its end, whichever socket object holds it by then."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sock: Any = None
        self.fired = False

    def hold(self, sock: Any) -> None:
        with self._lock:
            self._sock = sock
            if self.fired:
                self._shut()

    def fire(self) -> None:
        with self._lock:
            self.fired = True
            self._shut()

    def _shut(self) -> None:
        if self._sock is not None:
            try:
                _SHUTDOWN(self._sock, socket.SHUT_RDWR)
            except (OSError, ValueError, TypeError):
                pass


class DocumentFetcher(cimd.SafeMetadataFetcher):
    """CIMD_METADATA_FETCHER: `fetch(client_id)` -> (document, max_age), or CIMDError (module docstring)."""

    def ssl_context(self) -> ssl.SSLContext:
        return ssl.create_default_context()

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        try:
            return self._fetch(client_id)
        finally:
            clients.fetched()  # the in-flight slots go back as soon as the exchange is over

    def _fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        parsed = cimd._validate_client_id_url(client_id)
        try:
            name = addresses.normalise_host(parsed.hostname or "")
        except addresses.BadHostName as err:
            raise cimd.CIMDError(str(err)) from None
        port = parsed.port or 443
        end = time.monotonic() + float(oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS)
        try:
            checked = addresses.resolve_checked(name, port)
        except addresses.AddressRefused:
            raise cimd.CIMDError("client_id host does not lead to an address the site connects to") from None
        host = f"[{name}]" if ":" in name else name
        authority = host if parsed.port is None else f"{host}:{port}"
        target = (parsed.path or "/") + (f"?{parsed.query}" if parsed.query else "")
        last: Exception | None = None
        for address in checked:
            if time.monotonic() >= end:
                break
            try:
                return self._exchange(str(address), port, name, authority, target, end)
            except (OSError, ssl.SSLError, http.client.HTTPException, ValueError) as err:
                last = err  # this address failed to answer: the next one, within the same end
        raise cimd.CIMDError(f"could not fetch client_id document: {last!r}")

    def _exchange(self, address: str, port: int, name: str, authority: str, target: str,
                  end: float) -> tuple[dict[str, Any], int]:
        cut = _Cut()
        timer = threading.Timer(max(0.0, end - time.monotonic()), cut.fire)
        timer.daemon = True
        timer.start()
        sock: Any = None
        try:
            sock = socket.create_connection((address, port), timeout=max(0.001, end - time.monotonic()))
            cut.hold(sock)
            sock = self.ssl_context().wrap_socket(sock, server_hostname=name, do_handshake_on_connect=False)
            cut.hold(sock)
            sock.settimeout(max(0.001, end - time.monotonic()))
            sock.do_handshake()
            sock.sendall(f"GET {target} HTTP/1.1\r\nHost: {authority}\r\n"
                         "Accept: application/json, application/*+json\r\nAccept-Encoding: identity\r\n"
                         "User-Agent: resolver-client-metadata\r\nConnection: close\r\n\r\n".encode("ascii"))
            response = http.client.HTTPResponse(sock, method="GET")
            try:
                response.begin()
                result = self._read_document(response)
            finally:
                response.close()
        except (OSError, ssl.SSLError, http.client.HTTPException, ValueError, cimd.CIMDError):
            if cut.fired:  # whatever the read made of a document cut in two, it was cut
                raise cimd.CIMDError("client_id document cut off at CIMD_FETCH_TIMEOUT_SECONDS") from None
            raise
        finally:
            timer.cancel()
            if sock is not None:
                sock.close()
        if cut.fired:  # read to the end just as the bound passed: still past it
            raise cimd.CIMDError("client_id document cut off at CIMD_FETCH_TIMEOUT_SECONDS")
        return result
