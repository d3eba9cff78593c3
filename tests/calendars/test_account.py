"""resolver/calendars/caldav/account.py: the one origin a reader may talk to, and an account as a reader's key.

An href is kept exactly as the server wrote it (percent-encoding untouched);
one naming another scheme, host or port is not this origin's. What the reader
does with such a member is in tests/calendars/test_members.py and
tests/calendars/test_hostile_server.py.
"""
from __future__ import annotations

import pytest

from resolver.calendars.caldav import CalDAVAccount
from resolver.calendars.caldav.account import Origin

ORIGIN = Origin.of("https://dav.example/dav/alice/")


@pytest.mark.parametrize(("url", "origin"), [
    ("https://dav.example/dav/", Origin("https", "dav.example", 443)),
    ("HTTP://DAV.Example/", Origin("http", "dav.example", 80)),
    ("http://dav.example:8080", Origin("http", "dav.example", 8080)),
    ("https://[2001:db8::1]:8443/x", Origin("https", "2001:db8::1", 8443)),
])
def test_origin__scheme_host_and_port_with_the_defaults(url: str, origin: Origin) -> None:
    assert Origin.of(url) == origin


@pytest.mark.parametrize("url", ["ftp://dav.example/", "dav.example/dav/", "https:///nohost", "file:///etc/passwd"])
def test_origin__only_http_and_https_with_a_host(url: str) -> None:
    with pytest.raises(ValueError):
        Origin.of(url)


def test_origin__base_leaves_out_a_default_port_and_brackets_ipv6() -> None:
    assert ORIGIN.base == "https://dav.example"
    assert Origin.of("http://dav.example:8080/").base == "http://dav.example:8080"
    assert Origin.of("https://[2001:db8::1]/").base == "https://[2001:db8::1]"


@pytest.mark.parametrize(("href", "path"), [
    ("/dav/alice/work/a%20b.ics", "/dav/alice/work/a%20b.ics"),  # a path: byte for byte
    ("https://dav.example/dav/alice/work/x%2Fy.ics", "/dav/alice/work/x%2Fy.ics"),
    ("https://DAV.example:443/dav/?q=1", "/dav/?q=1"),
    ("//dav.example/dav/alice/", "/dav/alice/"),  # scheme-relative, on this origin
    ("https://dav.example", "/"),
    ("c%C3%A4t.ics", "/dav/alice/work/c%C3%A4t.ics"),  # relative: against the collection
])
def test_origin__path_of_an_href_on_this_origin_keeps_its_encoding(href: str, path: str) -> None:
    assert ORIGIN.path_of(href, base="/dav/alice/work/") == path


@pytest.mark.parametrize("href", [
    "http://dav.example/dav/alice/",  # another scheme
    "https://dav.example:8443/dav/alice/",  # another port
    "https://evil.example/dav/alice/",  # another host
    "//evil.example/dav/alice/",
    "https://dav.example.evil.example/",
    "ftp://dav.example/",
])
def test_origin__an_href_on_another_origin_has_no_path_here(href: str) -> None:
    assert ORIGIN.path_of(href) is None


def test_origin__url_escapes_only_what_cannot_stand_in_a_request_line() -> None:
    assert ORIGIN.url("/dav/alice/a b.ics") == "https://dav.example/dav/alice/a%20b.ics"
    assert ORIGIN.url("/dav/alice/a%20b.ics") == "https://dav.example/dav/alice/a%20b.ics"  # never twice
    assert ORIGIN.url("/dav/ä;x=1") == "https://dav.example/dav/%C3%A4;x=1"


def test_account__one_key_whatever_it_is_called_and_the_password_never_shown() -> None:
    account = CalDAVAccount(url="https://dav.example/", username="alice", password="a-secret", label="home")
    assert account == CalDAVAccount(url="https://dav.example/", username="alice", password="a-secret", label="work")
    assert account != CalDAVAccount(url="https://dav.example/", username="alice", password="other")
    assert "a-secret" not in repr(account)
    assert account.origin == Origin("https", "dav.example", 443)
