"""Who the reader reads for (CalDAVAccount), and the one origin it may talk to (Origin).

The CalDAV server is trusted with its own data only: every request goes to the
scheme, host and port of the account's URL, and an href is kept exactly as
the server wrote it (percent-encoding untouched), so that the caller acts on
the very resource the server named.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

from resolver.calendars.caldav.addresses import normalise_host

DEFAULT_PORTS = {"http": 80, "https": 443}
# What may stand in a request line as it is: printable ASCII but the space.
_LINE_SAFE = "".join(chr(c) for c in range(0x21, 0x7F))


@dataclass(frozen=True)
class CalDAVAccount:
    """One set of CalDAV credentials: the key of a reader (registry.ReaderRegistry.get).

    `label` names the account in logs and reprs (a user ID, a setting name);
    it is not part of the key, so one account is one reader whatever it is called.
    """

    url: str
    username: str = ""
    password: str = field(default="", repr=False)
    label: str = field(default="", compare=False)
    # A person's account: every connection goes only to a public address,
    # checked when connecting (addresses.py, connections.py). The operator's
    # own account (CALDAV_URL) may be on a private address.
    check_addresses: bool = False

    @property
    def origin(self) -> Origin:
        return Origin.of(self.url)


@dataclass(frozen=True)
class Origin:
    """Scheme, host and port (RFC 6454): the only place requests and credentials go."""

    scheme: str
    host: str
    port: int

    @classmethod
    def of(cls, url: str) -> Origin:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in DEFAULT_PORTS or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        # One spelling of the name (IDNA, as requests spells it) for the check, the
        # connection, the Host header and the comparison of redirect targets.
        return cls(scheme, normalise_host(parts.hostname), parts.port or DEFAULT_PORTS[scheme])

    @property
    def base(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if DEFAULT_PORTS[self.scheme] == self.port else f":{self.port}"
        return f"{self.scheme}://{host}{port}"

    def path_of(self, href: str, *, base: str = "/") -> str | None:
        """The href as a path on this origin, byte for byte; None when it names another origin.

        An absolute URL on this origin is reduced to its path (and query), never
        decoded; a relative reference is resolved against `base` (a path on this
        origin), which leaves percent-encoding alone too.
        """
        href = href.strip()
        parts = urlsplit(href)
        if parts.scheme or href.startswith("//"):
            absolute = href if parts.scheme else f"{self.scheme}:{href}"
            try:
                if Origin.of(absolute) != self:
                    return None
            except ValueError:
                return None
            parts = urlsplit(absolute)
            path = parts.path or "/"
            return f"{path}?{parts.query}" if parts.query else path
        if href.startswith("/"):
            return href
        return urljoin(base, href)

    def url(self, path: str) -> str:
        """The URL for a path on this origin, as the server spelled the path.

        Only what cannot stand in a request line (non-ASCII, spaces) is
        percent-encoded; an existing `%xx` is sent as it is.
        """
        from urllib.parse import quote

        return self.base + quote(path, safe=_LINE_SAFE)
