"""How the reader's requests reach the network: the requests adapter every DAVClient mounts.

`PinnedAdapter(check_addresses=True)` (a person's account) resolves the
host once for each request, checks every address (addresses.py) and has
urllib3 connect to the address it checked, not to the name: the pool is keyed
by that address, so a connection is never made to an address that was not
checked, whatever the name says by then (DNS rebinding). The name stays what
the server sees and proves: the Host header, TLS SNI (`server_hostname`) and
the certificate check (`assert_hostname`) all use it.

`PinnedAdapter(check_addresses=False)` (the operator's own CALDAV_URL, which
may be private) connects by name, as requests does.

Both bound the TLS handshake and the header phase: while urllib3 shakes
hands or waits for the status line and headers, a watchdog (resolver/watchdog.py)
shuts the socket down when the exchange's end passes, so a server trickling
either a byte at a time cannot hold a request past the deadline (a per-read
timeout never fires on such a server).
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from resolver.calendars.caldav import addresses
from resolver.watchdog import GuardedAdapter


class PinnedAdapter(GuardedAdapter):
    """requests' adapter, connecting to a checked address (module docstring)."""

    def __init__(self, *, check_addresses: bool, **kwargs: Any) -> None:
        self.check_addresses = check_addresses
        super().__init__(**kwargs)

    def build_connection_pool_key_attributes(self, request: Any, verify: Any,
                                             cert: Any = None) -> tuple[dict[str, Any], dict[str, Any]]:
        host_params, pool_kwargs = super().build_connection_pool_key_attributes(request, verify, cert)
        if not self.check_addresses:
            return host_params, pool_kwargs
        name = addresses.normalise_host(str(host_params["host"]))
        scheme = str(host_params["scheme"])
        port = host_params.get("port") or (443 if scheme == "https" else 80)
        checked = addresses.resolve_checked(name, int(port))
        host_params = {**host_params, "host": str(checked[0]), "port": port}
        if scheme == "https":
            # The certificate must still be the name's, and SNI must ask for the name.
            pool_kwargs = {**pool_kwargs, "server_hostname": name, "assert_hostname": name}
        return host_params, pool_kwargs

    def add_headers(self, request: Any, **kwargs: Any) -> None:
        # urllib3 would name the pinned address in Host; the server is asked for the name.
        if "Host" not in request.headers:
            request.headers["Host"] = urlsplit(request.url).netloc.rpartition("@")[2]
