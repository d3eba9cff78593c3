"""The client's address, for every per-address limit: X-Forwarded-For only from a proxy the operator named.

X-Forwarded-For is a header like any other: a client writes what it likes in
it. Believed from anyone, it lets one client be a new address on every
request and step round each per-address throttle (the OAuth endpoints, the
account checks). So the address is the connection's (REMOTE_ADDR) unless
that connection comes from one of RESOLVER["TRUSTED_PROXIES"] (addresses or
networks); then it is the right-most address in X-Forwarded-For that is not
itself a trusted proxy: the one the nearest trusted proxy saw connect.
Empty (the default) trusts no proxy, whatever the headers say.

The servers follow the same list: gunicorn.conf.py gives the uvicorn workers
RESOLVER_TRUSTED_PROXIES as their `forwarded_allow_ips` (empty by default),
and bin/run starts uvicorn with `--no-proxy-headers`. A server that already
put the client's address in REMOTE_ADDR leaves nothing for this to do: that
address is not a trusted proxy, so it is used as it is.
"""
from __future__ import annotations

import functools
import ipaddress
from typing import Any, Iterable, Mapping

from resolver.conf import resolver_settings

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@functools.lru_cache(maxsize=8)
def _networks(names: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(name.strip(), strict=False) for name in names if name.strip())


def trusted_proxies() -> tuple[Network, ...]:
    """RESOLVER["TRUSTED_PROXIES"] as networks (a list, or one comma-separated string)."""
    names = resolver_settings.TRUSTED_PROXIES or ()
    if isinstance(names, str):
        names = names.split(",")
    return _networks(tuple(str(name) for name in names))


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An address as a proxy writes it (`1.2.3.4`, `1.2.3.4:5678`, `[::1]:5678`, `::1`), or None."""
    text = text.strip()
    if text.startswith("[") and "]" in text:
        text = text[1:text.index("]")]
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _trusted(address: Any, networks: Iterable[Network]) -> bool:
    return address is not None and any(address in network for network in networks)


def client_address(request: Any) -> str:
    """The client's address for `request` (a Django request, or its META), by the module's rule."""
    meta: Mapping[str, Any] = getattr(request, "META", request) or {}
    remote = str(meta.get("REMOTE_ADDR") or "")
    networks = trusted_proxies()
    if not networks or not _trusted(_ip(remote), networks):
        return remote
    hops = [hop for hop in str(meta.get("HTTP_X_FORWARDED_FOR") or "").split(",") if hop.strip()]
    for hop in reversed(hops):
        address = _ip(hop)
        if address is None:
            # Not written by a proxy of ours: stop believing the header here.
            return remote
        if not _trusted(address, networks):
            return str(address)
    return str(_ip(hops[0])) if hops else remote  # every hop a trusted proxy: the first one asked
