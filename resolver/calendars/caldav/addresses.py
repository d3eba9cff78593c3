"""Which addresses a person's CalDAV account may reach, and the one spelling of its host name.

A person names the server; the site connects to it. Without a check, that
person could make the site connect to its own network (databases, the cloud
metadata service, an admin port on loopback). So, for per-user accounts
(unless RESOLVER["ACCOUNT_ALLOW_PRIVATE_ADDRESSES"]), every connection:

1. spells the host name once, with the IDNA rules of the HTTP client
   (`idna`'s UTS 46 mapping, as requests uses): the name checked is the
   name connected to (`straße.example` is `xn--strae-oqa.example` for both,
   never `strasse.example` for one of them);
2. resolves it once (`resolve_checked`), and refuses unless every address it
   gives is public (`allowed`): not loopback, private, link-local, shared,
   reserved, multicast or unspecified, and no IPv4 address hidden inside an
   IPv6 one (IPv4-mapped, IPv4-compatible, NAT64 64:ff9b::/96 and
   64:ff9b:1::/48, 6to4 2002::/16, Teredo 2001::/32) that is any of those;
3. connects to the address it checked (connections.py pins the pool to it),
   keeping the name for the Host header, TLS SNI and the certificate check.

The lookup is bounded by what is left of the request's deadline: it runs in
a worker thread (a system lookup cannot be interrupted) and the request stops
waiting for it when the deadline passes (`LookupTimedOut`; the reader says
`timeout`), so a name whose servers answer slowly costs no more than the
budget. The module holds no state; `socket.getaddrinfo` is looked up on each
call, so tests fake DNS by patching it.
"""
from __future__ import annotations

import ipaddress
import socket
import threading
from typing import Any

import idna

from resolver.domain import deadline

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_COMPATIBLE = ipaddress.IPv6Network("::/96")


class AddressRefused(Exception):
    """The name leads to an address this site does not connect to (or to none): nothing was sent.

    Not an OSError, so no HTTP library mistakes it for a dropped connection and retries.
    """


class LookupTimedOut(Exception):
    """The name's lookup outlived the request's deadline: nothing was sent. Not an OSError (no retry)."""


class BadHostName(ValueError):
    """A host name that has no IDNA spelling (the message says so)."""


def normalise_host(host: str) -> str:
    """The ASCII spelling of `host`, the way requests spells it (IDNA 2008 with UTS 46 mapping).

    An IP literal is returned as the ipaddress module writes it. BadHostName when there is none.
    """
    host = (host or "").strip().strip("[]")
    if not host:
        raise BadHostName("The server's address has no host name.")
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    if host.isascii():
        return host.lower()
    try:
        return idna.encode(host, uts46=True).decode("ascii").lower()
    except idna.IDNAError:
        raise BadHostName("The server's name is not a valid international domain name.") from None


def embedded_ipv4(address: IPAddress) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries (and may be routed to), in every known form."""
    if not isinstance(address, ipaddress.IPv6Address):
        return []
    found: list[ipaddress.IPv4Address] = []
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    if address in _COMPATIBLE and int(address) > 1:  # deprecated ::a.b.c.d (not :: or ::1)
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if address in _NAT64 or address in _NAT64_LOCAL:
        # RFC 6052: the /96 form ends with the address; a /48 local prefix may place it
        # elsewhere, but the whole /48 is refused anyway (it is not global).
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)  # (server, client)
    return found


def _public(address: IPAddress) -> bool:
    return (address.is_global and not address.is_multicast and not address.is_reserved
            and not address.is_unspecified and not address.is_loopback and not address.is_link_local)


def allowed(address: IPAddress) -> bool:
    """A public address, carrying no address that is not public either."""
    if isinstance(address, ipaddress.IPv6Address):
        if address in _NAT64_LOCAL:
            return False
        if address in _NAT64:
            # Judged by the IPv4 address it reaches (Python versions disagree on the prefix itself).
            return all(_public(inner) for inner in embedded_ipv4(address))
    return _public(address) and all(_public(inner) for inner in embedded_ipv4(address))


def parse_address(text: str) -> IPAddress:
    return ipaddress.ip_address(text.split("%", 1)[0])


def resolve_checked(host: str, port: int) -> list[IPAddress]:
    """Every address `host` (already normalised) resolves to now, all public; else AddressRefused.

    A name that does not resolve is refused the same way, so the answer never
    tells a private name from an unknown one.
    """
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        addresses = [literal]
    else:
        try:
            infos = _lookup(host, port)
        except (OSError, UnicodeError, ValueError):
            raise AddressRefused(host) from None
        addresses = list(dict.fromkeys(parse_address(str(info[4][0])) for info in infos))
    if not addresses or not all(allowed(a) for a in addresses):
        raise AddressRefused(host)
    return addresses


def _lookup(host: str, port: int) -> list[Any]:
    """getaddrinfo, given no longer than the request's deadline leaves (LookupTimedOut past it)."""
    lookup = socket.getaddrinfo  # looked up now: the one in force for this call (tests fake it)
    left = deadline.remaining()
    if left is None:
        return lookup(host, port, type=socket.SOCK_STREAM)
    if left <= 0:
        raise LookupTimedOut(host)
    answer: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            answer["infos"] = lookup(host, port, type=socket.SOCK_STREAM)
        except BaseException as err:  # handed to the waiting request
            answer["error"] = err
        finally:
            done.set()

    # A thread per lookup, not a pool: one slow name must not queue another person's lookups.
    threading.Thread(target=run, name="caldav-lookup", daemon=True).start()
    if not done.wait(left):
        raise LookupTimedOut(host)
    if "error" in answer:
        raise answer["error"]
    return answer["infos"]  # type: ignore[no-any-return]
