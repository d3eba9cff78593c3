"""Which addresses the site may connect to for a person, and the one spelling of a host name.

A person names a server (a CalDAV account) or a client names a URL (a Client
ID Metadata Document, resolver/oauth/documents.py); the site connects to it.
Without a check, either could make the site connect to its own network
(databases, the cloud metadata service, an admin port on loopback). So, for
per-user accounts (unless RESOLVER["ACCOUNT_ALLOW_PRIVATE_ADDRESSES"]) and for
every document fetch, each connection:

1. spells the host name once, with the IDNA rules of the HTTP client
   (`idna`'s UTS 46 mapping, as requests uses): the name checked is the
   name connected to (`straße.example` is `xn--strae-oqa.example` for both,
   never `strasse.example` for one of them);
2. resolves it once (`resolve_checked`), and refuses unless every address it
   gives is allowed (`allowed`) by the site's own table,
   resolver/data/addresses/special-purpose.csv: IANA's special-purpose
   registries, plus multicast and the IPv6 space outside global unicast.
   The most specific row holding an address decides: refuse, allow, or
   judge it by the IPv4 address it carries (NAT64 64:ff9b::/96, 6to4
   2002::/16). Python's own `ipaddress` flags are never consulted: they differ
   between versions (3.11 calls 192.0.0.192 and fec0::/10 public);
3. connects to the address it checked (connections.py pins the pool to it),
   keeping the name for the Host header, TLS SNI and the certificate check.

The lookup is bounded by what is left of the request's deadline: it runs in
a worker thread (a system lookup cannot be interrupted) and the request stops
waiting for it when the deadline passes (`resolver.watchdog.LookupTimedOut`; the reader says
`timeout`), so a name whose servers answer slowly costs no more than the
budget. The table is read once per process; `socket.getaddrinfo` is looked up on each
call, so tests fake DNS by patching it.
"""
from __future__ import annotations

import csv
import functools
import ipaddress
from dataclasses import dataclass
from pathlib import Path

import idna

from resolver.watchdog import lookup

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

TABLE = Path(__file__).resolve().parents[2] / "data" / "addresses" / "special-purpose.csv"
POLICIES = ("refuse", "allow", "embedded")


class AddressRefused(Exception):
    """The name leads to an address this site does not connect to (or to none): nothing was sent.

    Not an OSError, so no HTTP library mistakes it for a dropped connection and retries.
    """


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


@dataclass(frozen=True)
class Row:
    """One block of the table: its prefix, the registry's name, RFC and reachability, and the policy."""

    network: ipaddress.IPv4Network | ipaddress.IPv6Network
    name: str
    rfc: str
    registry: str
    policy: str


def read_table(path: Path = TABLE) -> tuple[Row, ...]:
    """The table's rows, most specific first; ValueError naming the line for a malformed one."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    rows = []
    for number, record in enumerate(csv.DictReader(lines), start=2):
        try:
            row = Row(ipaddress.ip_network(record["prefix"]), record["name"], record["rfc"],
                      record["registry"], record["policy"])
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(f"{path.name}, row {number}: {err}") from None
        if row.policy not in POLICIES or row.registry not in ("true", "false", "n/a"):
            raise ValueError(f"{path.name}, row {number}: policy {row.policy!r}, registry {row.registry!r}")
        rows.append(row)
    return tuple(sorted(rows, key=lambda r: -r.network.prefixlen))


@functools.lru_cache(maxsize=1)
def _table() -> tuple[Row, ...]:
    return read_table()


def row_for(address: IPAddress) -> Row | None:
    """The most specific row holding `address`, or None (a global unicast address)."""
    for row in _table():
        if row.network.version == address.version and address in row.network:
            return row
    return None


def embedded_ipv4(address: IPAddress, row: Row) -> ipaddress.IPv4Address:
    """The IPv4 address an `embedded` row's address carries (RFC 6052 /96: the last 32 bits; 6to4: bits 16-48)."""
    if address.version == 6 and address.sixtofour is not None and row.network.prefixlen == 16:
        return address.sixtofour
    return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)


def _public(address: IPAddress) -> bool:
    row = row_for(address)
    if row is None or row.policy == "allow":
        return True
    if row.policy == "embedded":
        return _public(embedded_ipv4(address, row))
    return False


def allowed(address: IPAddress) -> bool:
    """Whether the site may connect to `address` for a person (the table, module docstring)."""
    return _public(address)


def parse_address(text: str) -> IPAddress:
    return ipaddress.ip_address(text.split("%", 1)[0])


def resolve_checked(host: str, port: int) -> list[IPAddress]:
    """Every address `host` (already normalised) resolves to now, all allowed; else AddressRefused.

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
            infos = lookup(host, port)
        except (OSError, UnicodeError, ValueError):
            raise AddressRefused(host) from None
        addresses = list(dict.fromkeys(parse_address(str(info[4][0])) for info in infos))
    if not addresses or not all(allowed(a) for a in addresses):
        raise AddressRefused(host)
    return addresses


