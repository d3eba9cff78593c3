"""Client ID Metadata Documents fetched by the site's fetcher (resolver/oauth/documents.py), from a scripted
TLS host on 127.0.0.1 whose name is faked in process (tests/support/network.py).

What matters: the fetch is bounded as a whole (a host trickling its document,
headers or handshake is cut off at CIMD_FETCH_TIMEOUT_SECONDS and the client
is unknown), and it reaches only the addresses a person's CalDAV account may
(the same table, resolver/data/addresses/special-purpose.csv). Loopback
stands for a public host only where a test says so (`public_loopback`).
"""
from __future__ import annotations

import re
import threading

import pytest
import requests
from django.contrib.auth import get_user_model
from django.test import Client
from oauth2_provider.cimd import CIMDError
from oauth2_provider.models import Application

from resolver.calendars.caldav import addresses
from resolver.oauth import clients
from tests.oauth.document_server import DocumentServer, TrustingFetcher
from tests.support.network import FakeDNS

LIVE = pytest.mark.django_db(transaction=True)  # the tests through the live site

NAME = "agent.example"
BOUND = 1  # CIMD_FETCH_TIMEOUT_SECONDS in these tests; the scripted hosts would take a minute and more


@pytest.fixture
def fetcher_settings(settings):
    settings.OAUTH2_PROVIDER = {**settings.OAUTH2_PROVIDER, "CIMD_ENABLED": True,
                                "CIMD_METADATA_FETCHER": "tests.oauth.document_server.TrustingFetcher",
                                "CIMD_FETCH_TIMEOUT_SECONDS": BOUND, "CIMD_FAILURE_BACKOFF_SECONDS": 0}
    return settings


@pytest.fixture
def public_loopback(monkeypatch):
    """127.0.0.1 stands for a public host (the scripted document host); every other address as the table says."""
    real = addresses._public
    monkeypatch.setattr(addresses, "_public", lambda address: str(address) == "127.0.0.1" or real(address))


def serve(tmp_path, mode: str = "document", name: str = NAME, **kwargs) -> DocumentServer:
    server = DocumentServer(tmp_path, name, mode=mode, **kwargs)
    TrustingFetcher.cafile = str(server.cert_path)
    return server


# --- the fetcher itself ------------------------------------------------------------------------------

def test_fetch__the_document_from_the_checked_address_with_the_names_sni_and_host(
        fetcher_settings, public_loopback, tmp_path):
    with serve(tmp_path) as server, FakeDNS({NAME: ["127.0.0.1"]}).installed() as dns:
        metadata, max_age = TrustingFetcher().fetch(server.client_id)
    assert metadata["client_id"] == server.client_id and max_age == 600
    assert dns.lookups == [NAME] and not dns.public_connects
    assert server.sni == [NAME]
    assert server.requests[0].startswith(b"GET /oauth/client.json HTTP/1.1\r\n")
    assert f"\r\nHost: {NAME}:{server.port}\r\n".encode() in server.requests[0]


@pytest.mark.parametrize("mode", ["trickle_body", "trickle_headers", "trickle_handshake"])
def test_fetch__a_trickling_host_is_cut_off_at_the_bound(fetcher_settings, public_loopback, tmp_path, mode):
    # 0.3 s a byte: the document alone would take over a minute; each read returns well inside any timeout.
    with serve(tmp_path, mode, interval=0.3) as server, FakeDNS({NAME: ["127.0.0.1"]}).installed():
        with pytest.raises(CIMDError, match="cut off|could not fetch"):
            TrustingFetcher().fetch(server.client_id)
        assert server.cut.wait(10), "the host was never cut off"
    assert server.connections == 1


@pytest.mark.parametrize("answer", [
    "127.0.0.1", "10.0.0.5", "169.254.169.254",
    "192.0.0.192",        # in 192.0.0.0/24 (a cloud metadata address); Python 3.11 calls it global
    "::127.0.0.1",        # IPv4-compatible
    "64:ff9b:1::7f00:1",  # local-use NAT64
    "::ffff:0:7f00:1",    # ::ffff:0:a.b.c.d
    "fec0::1",            # site-local; Python 3.11 calls it global
    "64:ff9b::7f00:1",    # NAT64 of loopback
])
def test_fetch__addresses_the_account_policy_refuses_are_never_connected_to(fetcher_settings, tmp_path, answer):
    with serve(tmp_path, name="evil.example") as server:
        with FakeDNS({"evil.example": [answer]}).installed() as dns:
            with pytest.raises(CIMDError, match="does not lead to an address"):
                TrustingFetcher().fetch(server.client_id)
    assert server.connections == 0 and not dns.public_connects


@pytest.mark.parametrize("literal", ["[::127.0.0.1]", "[::ffff:127.0.0.1]", "192.0.0.192", "127.0.0.1"])
def test_fetch__an_address_literal_in_the_url_is_judged_the_same(fetcher_settings, tmp_path, literal):
    with serve(tmp_path) as server:
        with pytest.raises(CIMDError, match="does not lead to an address"):
            TrustingFetcher().fetch(f"https://{literal}:{server.port}/oauth/client.json")
    assert server.connections == 0


def test_fetch__a_certificate_for_another_name_is_refused(fetcher_settings, public_loopback, tmp_path):
    with serve(tmp_path, name="other.example") as server, FakeDNS({NAME: ["127.0.0.1"]}).installed():
        with pytest.raises(CIMDError):
            TrustingFetcher().fetch(f"https://{NAME}:{server.port}/oauth/client.json")
    assert server.requests == []  # nothing asked of a host that is not the name's


# --- through the authorize page ------------------------------------------------------------------------

@pytest.fixture
def site(live_server, fetcher_settings):
    fetcher_settings.RESOLVER = {**fetcher_settings.RESOLVER, "SITE_URL": live_server.url}
    return live_server


_sessions: list[requests.Session] = []


@pytest.fixture(autouse=True)
def _close_sessions():
    yield
    while _sessions:  # no kept-alive connection outlives the test in the live server's threads
        _sessions.pop().close()


def browser_for(username: str) -> requests.Session:
    user = get_user_model().objects.create_user(username, password=f"pw-{username}-1")
    django_client = Client()
    django_client.force_login(user)
    session = requests.Session()
    session.cookies.set("sessionid", django_client.cookies["sessionid"].value)
    _sessions.append(session)
    return session


def authorize(site, browser, server: DocumentServer) -> requests.Response:
    params = {"response_type": "code", "client_id": server.client_id, "redirect_uri": server.callback,
              "state": "s1", "scope": "read", "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
              "code_challenge_method": "S256", "resource": site.url + "/mcp"}
    return browser.get(site.url + "/oauth/authorize/", params=params, allow_redirects=False, timeout=60)


@LIVE
def test_authorize_page__a_trickled_document_is_cut_off_and_the_client_unknown(site, public_loopback, tmp_path):
    browser = browser_for("alice")
    with serve(tmp_path, "trickle_body", interval=0.3) as server, FakeDNS({NAME: ["127.0.0.1"]}).installed():
        response = authorize(site, browser, server)
        assert server.cut.wait(10), "the host was never cut off"
    assert response.status_code == 400 and "Invalid client_id" in response.text
    assert not Application.objects.filter(client_id=server.client_id).exists()


@LIVE
def test_authorize_page__a_good_document_makes_the_client_and_the_page_names_its_host(
        site, public_loopback, tmp_path):
    browser = browser_for("alice")
    with serve(tmp_path) as server, FakeDNS({NAME: ["127.0.0.1"]}).installed():
        response = authorize(site, browser, server)
    assert response.status_code == 200, response.text
    assert re.search(r'from <code class="origin">agent\.example:\d+</code>', response.text)
    assert Application.objects.filter(client_id=server.client_id).exists()


@LIVE
def test_in_flight__a_full_cap_makes_a_new_client_wait_for_a_slot_not_fail(site, public_loopback, tmp_path, settings):
    """One slot; Bob's document trickles and holds it; Alice's good document waits for it and is served."""
    settings.RESOLVER = {**settings.RESOLVER, "OAUTH_CIMD_FETCHES_IN_FLIGHT": 1}
    alice, bob = browser_for("alice"), browser_for("bob")
    slow = serve(tmp_path, "trickle_body", name="slow.example", interval=0.3)
    good = serve(tmp_path, name=NAME)
    answers: dict[str, requests.Response] = {}
    with slow, good, FakeDNS({"slow.example": ["127.0.0.1"], NAME: ["127.0.0.1"]}).installed():
        TrustingFetcher.cafile = str(tmp_path / "both.pem")
        (tmp_path / "both.pem").write_bytes(slow.cert_path.read_bytes() + good.cert_path.read_bytes())
        bobs = threading.Thread(target=lambda: answers.setdefault("bob", authorize(site, bob, slow)))
        bobs.start()
        for _ in range(200):
            if slow.connections:
                break
            threading.Event().wait(0.05)
        assert slow.connections == 1  # Bob's fetch holds the only slot now
        answers["alice"] = authorize(site, alice, good)
        bobs.join(30)
        assert slow.cut.wait(10)
    assert answers["alice"].status_code == 200, answers["alice"].text
    assert answers["bob"].status_code == 400 and "Invalid client_id" in answers["bob"].text


@LIVE
def test_in_flight__slots_held_past_the_wait_is_503_with_retry_after(site, public_loopback, tmp_path, settings):
    settings.RESOLVER = {**settings.RESOLVER, "OAUTH_CIMD_FETCHES_IN_FLIGHT": 1}
    browser = browser_for("alice")
    assert clients._slots.acquire(0)  # held by something that never gives it back while we wait
    try:
        with serve(tmp_path) as server, FakeDNS({NAME: ["127.0.0.1"]}).installed():
            response = authorize(site, browser, server)
    finally:
        clients._slots.release()
    assert response.status_code == 503 and "temporarily_unavailable" in response.text
    assert int(response.headers["Retry-After"]) >= 1 and server.connections == 0
    assert "no-store" in response.headers["Cache-Control"]
