"""The CalDAV servers of the compatibility suite, and a plain WebDAV client to seed and change them.

Radicale and Xandikos are started here (Python packages of the project);
DAViCal, Cyrus and SOGo by `scripts/peers/*.sh` (Debian's packages), which
leave a `url` file in LIFEPROJECT_PEERS_DIR/<name>/ (default
/var/tmp/lifeproject-peers). A peer that is not there is skipped by name,
or fails the run under LIFEPROJECT_REQUIRE_SERVICES=1 (CI).
"""
from __future__ import annotations

import itertools
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import requests
from lxml import etree

PEERS_DIR = Path(os.environ.get("LIFEPROJECT_PEERS_DIR", "/var/tmp/lifeproject-peers"))
REQUIRE = os.environ.get("LIFEPROJECT_REQUIRE_SERVICES", "") == "1"
EXTERNAL = {"davical": "DAViCal", "cyrus": "Cyrus", "sogo": "SOGo"}
_numbers = itertools.count(1)
_MKCALENDAR = ('<?xml version="1.0" encoding="utf-8"?><C:mkcalendar xmlns:D="DAV:" '
               'xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop><D:displayname>{name}</D:displayname>'
               '</D:prop></D:set></C:mkcalendar>')
_LISTING = ('<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/>'
            '</D:prop></D:propfind>')


@dataclass
class Peer:
    """One running server: where its account is, and how to write to it as a client would."""

    name: str
    version: str
    url: str
    username: str
    password: str
    home: str  # the calendar home's path, where the suite makes its collections
    event_time_range: bool = True
    stop: Callable[[], None] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.session = requests.Session()
        if self.username:
            self.session.auth = (self.username, self.password)
        self.origin = self.url.split("/", 3)[:3]

    def send(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """A request to `path` exactly as written (requests would re-quote `%41`-like escapes)."""
        base = "/".join(self.origin)
        prepared = self.session.prepare_request(requests.Request(method, base + path, **kwargs))
        prepared.url = base + path
        try:
            return self.session.send(prepared, timeout=30, allow_redirects=False)
        except requests.ConnectionError:
            # SOGo closes an idle kept-alive connection without a word: this client's only retry.
            return self.session.send(prepared, timeout=30, allow_redirects=False)

    def new_collection(self) -> str:
        """A fresh calendar collection for one test; its ID."""
        cid = f"compat{os.getpid()}x{next(_numbers)}x{int(time.time()) % 100000}"
        answer = self.send("MKCALENDAR", f"{self.home}{cid}/", data=_MKCALENDAR.format(name=cid),
                           headers={"Content-Type": "application/xml; charset=utf-8"})
        assert answer.status_code in (200, 201), (self.name, answer.status_code, answer.text[:300])
        return cid

    def drop_collection(self, cid: str) -> None:
        self.send("DELETE", f"{self.home}{cid}/")

    def put(self, cid: str, name: str, text: str) -> None:
        answer = self.send("PUT", f"{self.home}{cid}/{name}", data=text.encode(),
                           headers={"Content-Type": "text/calendar; charset=utf-8"})
        assert answer.status_code in (200, 201, 204), (self.name, name, answer.status_code, answer.text[:300])

    def delete(self, cid: str, name: str) -> None:
        answer = self.send("DELETE", f"{self.home}{cid}/{name}")
        assert answer.status_code in (200, 204), (self.name, name, answer.status_code)

    def listing(self, cid: str) -> dict[str, str]:
        """href -> ETag, as the server's own Depth 1 PROPFIND spells them (never decoded)."""
        answer = self.send("PROPFIND", f"{self.home}{cid}/", data=_LISTING,
                           headers={"Depth": "1", "Content-Type": "application/xml; charset=utf-8"})
        assert answer.status_code == 207, (self.name, answer.status_code)
        root = etree.fromstring(answer.content)
        found = {}
        for response in root.iter("{DAV:}response"):
            href = response.findtext("{DAV:}href") or ""
            etag = response.findtext(".//{DAV:}getetag")
            if etag and not href.rstrip("/").endswith(cid):
                found["/" + href.split("://", 1)[1].split("/", 1)[1] if "://" in href else href] = etag
        return found

    def get(self, href: str) -> requests.Response:
        return self.send("GET", href)


def external(name: str) -> Peer | str:
    """The peer its script started, or why not (a sentence naming it)."""
    url_file = PEERS_DIR / name / "url"
    label = EXTERNAL[name]
    if not url_file.exists():
        return f"{label} is not installed here: run scripts/peers/{name}.sh (as root)"
    values = dict(line.split("=", 1) for line in url_file.read_text().splitlines() if "=" in line)
    url = values["url"]
    try:
        answer = requests.request("PROPFIND", url, auth=(values["username"], values["password"]),
                                  headers={"Depth": "0"}, timeout=10)
    except requests.RequestException as err:
        return f"{label} does not answer at {url} ({type(err).__name__}): run scripts/peers/{name}.sh"
    if answer.status_code != 207:
        return f"{label} answers {answer.status_code} at {url}: run scripts/peers/{name}.sh"
    path = "/" + url.split("://", 1)[1].split("/", 1)[1]
    return Peer(name=name, version=values.get("version", label), url=url, username=values["username"],
                password=values["password"], home=path)
