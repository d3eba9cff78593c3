"""hrefs a server can be asked for: the rule for a member's href when a server's own answers disagree.

The reader returns the server's href byte for byte, so a caller can GET it
and write to it with If-Match. That holds when the href is a valid URI
reference and names the resource in the server's own listing. Two ways it
does not (seen on SOGo 5.8, docs/servers.md):

- an href that is not a valid URI reference (a raw space, a `%` not
  followed by two hex digits, a non-ASCII character): `usable` escapes only
  the characters RFC 3986 forbids there, never what is already escaped, so
  `with space.ics` becomes `with%20space.ics` and `%2541` stays `%2541`;
- a sync report listing hrefs decoded once (`pct%41.ics` for the resource
  its PROPFIND lists as `pct%2541.ics`, a different name: GET gives 404).
  Such an href is valid, but a server that escapes properly never escapes
  an unreserved character (`%41` is `A`): `suspect` says so, and the reader
  then asks the collection's own listing and takes its form (`agree`).
"""
from __future__ import annotations

import re
from urllib.parse import unquote

# RFC 3986: what may stand in a path (pchar, "/"), a query and a fragment, besides "%" HEXDIG HEXDIG.
_ALLOWED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/?#")
_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})|[^%" + re.escape("".join(sorted(_ALLOWED))) + "]")
# A percent-encoded unreserved character: never produced by a server that escapes once.
_UNRESERVED_ESCAPED = re.compile(r"%(?:4[1-9A-Fa-f]|5[0-9Aa]|6[1-9A-Fa-f]|7[0-9Aa]|3[0-9]|2[Dd]|2[Ee]|5[Ff]|7[Ee])")


def valid(href: str) -> bool:
    """Whether `href` is a valid URI reference as written."""
    return _ESCAPE.search(href) is None


def usable(href: str) -> str:
    """`href` itself when valid; else with only the forbidden characters percent-encoded (UTF-8)."""
    if valid(href):
        return href
    return _ESCAPE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode("utf-8", "surrogatepass")), href)


def suspect(href: str) -> bool:
    """Whether a (usable) href may be a decoded form of the server's real one: check it against the listing."""
    return _UNRESERVED_ESCAPED.search(href) is not None


def agree(hrefs: list[str], listed: list[str]) -> dict[str, str]:
    """For each href of a report, the listing's form of the same resource where they differ.

    The same resource: the listing's href decoded once is the report's (the
    report was decoded once: SOGo), or both decode to the same name and no
    other listed href does. An href the listing does not name is left as it is.
    """
    listed_set = set(listed)
    once: dict[str, list[str]] = {}
    fully: dict[str, list[str]] = {}
    for other in listed:
        once.setdefault(usable(unquote(other)), []).append(other)
        fully.setdefault(unquote(other), []).append(other)
    forms: dict[str, str] = {}
    for href in hrefs:
        if href in listed_set:
            continue
        candidates = once.get(href) or fully.get(unquote(href)) or []
        if len(candidates) == 1:
            forms[href] = candidates[0]
    return forms
