"""The connect-time address policy (issue 26, point 1): a person's account reaches only a public
address, checked on the connection that uses it.

DNS is faked in process (tests/support/network.py) and a listener on 127.0.0.1
stands for the site's own network: in every attack it must receive nothing.
The connection that uses the checked address (pinned, TLS, a redirect checked
again) is tested at the HTTP client in tests/calendars/test_connections.py.
"""
from __future__ import annotations

import io
import ipaddress
import json
import sys

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from resolver import accounts
from resolver.calendars.caldav import addresses
from resolver.domain.errors import AccountRejected
from resolver.models import CalendarAccount
from tests.support.network import FakeDNS, Listener

pytestmark = pytest.mark.django_db

PUBLIC = "93.184.216.34"  # only ever resolved: the guard in FakeDNS refuses a connection off loopback


@pytest.fixture
def guarded(per_user, settings):
    """Per-user accounts with the production policy: private addresses refused."""
    settings.RESOLVER = {**settings.RESOLVER, "ACCOUNT_ALLOW_PRIVATE_ADDRESSES": False}
    return per_user


def _add_command(username: str, url: str) -> CommandError:
    real, sys.stdin = sys.stdin, io.StringIO("a password\n")
    try:
        with pytest.raises(CommandError) as caught:
            call_command("calendar_accounts", "add", "--user", username, "--url", url, "--username", "someone",
                         "--password-stdin", stdout=io.StringIO(), stderr=io.StringIO())
    finally:
        sys.stdin = real
    return caught.value


# --- the rules ------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
    "224.0.0.1", "240.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fc00::1", "ff02::1",
    "::ffff:127.0.0.1",            # IPv4-mapped
    "::127.0.0.1", "::a9fe:a9fe",  # IPv4-compatible
    "64:ff9b::a9fe:a9fe",          # NAT64 of 169.254.169.254
    "64:ff9b::7f00:1",             # NAT64 of 127.0.0.1
    "64:ff9b:1::a9fe:a9fe",        # local-use NAT64 prefix
    "2002:7f00:1::1",              # 6to4 of 127.0.0.1
    "2002:a9fe:a9fe::1",           # 6to4 of 169.254.169.254
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo (RFC 4380's example: client 192.0.2.45)
])
def test_allowed__refuses_every_non_public_form(text):
    assert not addresses.allowed(ipaddress.ip_address(text))


@pytest.mark.parametrize("text", ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946", "64:ff9b::5db8:d822"])
def test_allowed__public_addresses_pass(text):
    assert addresses.allowed(ipaddress.ip_address(text))


# --- the table (resolver/data/addresses/special-purpose.csv), row by row ---------------------------

TABLE = addresses.read_table()

# What the registries say must be refused (or judged by the IPv4 inside), whatever the file holds:
# a row deleted or loosened fails here.
REQUIRED = {
    "0.0.0.0/8": "refuse", "10.0.0.0/8": "refuse", "100.64.0.0/10": "refuse", "127.0.0.0/8": "refuse",
    "169.254.0.0/16": "refuse", "172.16.0.0/12": "refuse", "192.0.0.0/24": "refuse", "192.0.0.9/32": "refuse",
    "192.0.0.10/32": "refuse", "192.0.2.0/24": "refuse", "192.88.99.0/24": "refuse",
    "192.168.0.0/16": "refuse", "198.18.0.0/15": "refuse", "198.51.100.0/24": "refuse",
    "203.0.113.0/24": "refuse", "224.0.0.0/4": "refuse", "240.0.0.0/4": "refuse",
    "255.255.255.255/32": "refuse", "::1/128": "refuse", "::/128": "refuse", "::ffff:0:0/96": "refuse",
    "64:ff9b::/96": "embedded", "64:ff9b:1::/48": "refuse", "100::/64": "refuse", "2001::/23": "refuse",
    "2001::/32": "refuse", "2001:db8::/32": "refuse", "2002::/16": "embedded", "3fff::/20": "refuse",
    "5f00::/16": "refuse", "fc00::/7": "refuse", "fe80::/10": "refuse", "fec0::/10": "refuse",
    "ff00::/8": "refuse", "::/8": "refuse",
}
# Rows IANA marks globally reachable that the table lets through (2001::/23's exceptions and the like).
REACHABLE = {"192.31.196.0/24", "192.52.193.0/24", "192.175.48.0/24", "2001:1::1/128", "2001:1::2/128",
             "2001:1::3/128", "2001:3::/32", "2001:4:112::/48", "2001:20::/28", "2001:30::/28",
             "2620:4f:8000::/48"}


def test_table__holds_every_required_block_with_its_policy():
    policies = {str(row.network): row.policy for row in TABLE}
    assert {prefix: policies.get(prefix) for prefix in REQUIRED} == REQUIRED
    assert {prefix for prefix, policy in policies.items() if policy == "allow"} == REACHABLE
    # A registry row marked not globally reachable is never let through.
    assert all(row.policy != "allow" for row in TABLE if row.registry != "true")


def _inside(row):
    network = row.network
    return network[1] if network.num_addresses > 2 else network[0]


def _first_after(row):
    """The first address after the block, when no row of the table holds it (else None)."""
    last = int(row.network.broadcast_address)
    top = 2 ** row.network.max_prefixlen - 1
    if last == top:
        return None
    after = ipaddress.ip_address(last + 1)
    return None if addresses.row_for(after) is not None else after


@pytest.mark.parametrize("row", [row for row in TABLE if row.policy == "refuse"], ids=lambda r: str(r.network))
def test_table__an_address_inside_a_refused_row_is_refused_and_the_first_after_it_allowed(row):
    for address in {row.network[0], _inside(row), row.network.broadcast_address}:
        assert not addresses.allowed(address), (address, row.name)
    after = _first_after(row)
    if after is not None:
        assert addresses.allowed(after), (after, row.name)


@pytest.mark.parametrize("row", [row for row in TABLE if row.policy == "allow"], ids=lambda r: str(r.network))
def test_table__an_address_inside_a_globally_reachable_exception_is_allowed(row):
    assert addresses.allowed(_inside(row))


@pytest.mark.parametrize("inner, ok", [("127.0.0.1", False), ("10.0.0.5", False), ("169.254.169.254", False),
                                       ("192.0.0.192", False), ("93.184.216.34", True)])
def test_table__embedded_rows_are_judged_by_the_ipv4_address_inside(inner, ok):
    four = int(ipaddress.IPv4Address(inner))
    nat64 = ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b::")) | four)
    sixtofour = ipaddress.IPv6Address((0x2002 << 112) | (four << 80) | 1)
    assert addresses.allowed(nat64) is ok and addresses.allowed(sixtofour) is ok


@pytest.mark.parametrize("text", [
    "192.0.0.192",          # a cloud metadata address, in 192.0.0.0/24 (Python 3.11: "global")
    "192.0.0.9",            # anycast, inside 192.0.0.0/24, refused with it
    "fec0::1",              # site-local, deprecated (Python 3.11: "global")
    "::127.0.0.1",          # IPv4-compatible
    "::ffff:0:7f00:1",      # ::ffff:0:a.b.c.d, IPv4-translated
    "64:ff9b:1::a9fe:a9fe",  # local-use NAT64
    "5f00::1", "3fff::1", "100::1", "2001:2::1",
])
def test_table__forms_the_interpreter_may_call_public_are_refused(text):
    assert not addresses.allowed(ipaddress.ip_address(text))


def test_table__a_malformed_row_is_an_error_naming_it(tmp_path):
    bad = tmp_path / "t.csv"
    bad.write_text("prefix,name,rfc,registry,policy\n10.0.0.0/8,x,RFC 1918,false,refuse\n10.0.0.1/8,x,y,false,refuse\n")
    with pytest.raises(ValueError, match="row 3"):
        addresses.read_table(bad)


def test_normalise_host__the_http_clients_idna_spelling():
    import requests

    assert addresses.normalise_host("straße.example") == "xn--strae-oqa.example"
    prepared = requests.Request("GET", "http://straße.example/").prepare()
    assert prepared.url == "http://xn--strae-oqa.example/"  # requests spells it the same
    assert addresses.normalise_host("Dav.Example") == "dav.example"
    assert addresses.normalise_host("[::1]") == "::1"
    with pytest.raises(addresses.BadHostName):
        addresses.normalise_host("a\u200db.example")  # a joiner no IDNA rule admits here


# --- attacks, through the documented surfaces ------------------------------------------------------


def test_add__idna_name_is_checked_as_it_would_be_connected(guarded, django_user_model):
    django_user_model.objects.create_user("mallory")
    with Listener() as listener:
        dns = FakeDNS({"strasse.example": [PUBLIC], "xn--strae-oqa.example": ["127.0.0.1"]})
        with dns.installed():
            error = _add_command("mallory", f"http://straße.example:{listener.port}/")
    assert error.returncode == 2 and "account_rejected (address_not_allowed)" in str(error)
    assert dns.lookups == ["xn--strae-oqa.example"] and not dns.public_connects
    assert listener.untouched and not CalendarAccount.objects.exists()


def test_add__rebinding_at_the_check_is_refused_on_the_connection(guarded, django_user_model):
    user = django_user_model.objects.create_user("mallory")
    with Listener() as listener:
        dns = FakeDNS({"rebind.example": [PUBLIC, "127.0.0.1"]})  # public to the check, loopback after
        with dns.installed(), pytest.raises(AccountRejected) as caught:
            accounts.add_account(user=user, url=f"http://rebind.example:{listener.port}/", username="u",
                                 password="p")
    assert caught.value.details["reason"] == "address_not_allowed"
    assert len(dns.lookups) >= 2 and not dns.public_connects  # the connection looked again, and refused
    assert listener.untouched and not CalendarAccount.objects.exists()


def _saved_account(user, url: str) -> CalendarAccount:
    """An account saved while its name was public (as if added earlier)."""
    row = CalendarAccount(user=user, slug="home", url=url, username="alice")
    row.save()
    row.set_password("alice's app password")
    row.save()
    return row


def test_resolve_and_collections__rebinding_after_the_account_was_saved(guarded, django_user_model):
    from rest_framework.authtoken.models import Token

    user = django_user_model.objects.create_user("alice")
    token = Token.objects.create(user=user).key
    with Listener() as listener:
        _saved_account(user, f"http://saved.example:{listener.port}/")
        with FakeDNS({"saved.example": ["127.0.0.1"]}).installed():
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
            api = client.post("/v1/resolve", {"text": "Quarterly report", "kind": "task"}, format="json")
            listed = client.get("/v1/collections")
            out = io.StringIO()
            with pytest.raises(SystemExit) as exit_:
                call_command("resolve", "--user", "alice", "--text", "Quarterly report", "--kind", "task",
                             "--json", stdout=out, stderr=io.StringIO())
    assert api.status_code == 503
    assert api.json()["error"]["code"] == "calendar_unavailable"
    assert api.json()["error"]["details"]["reason"] == "address_not_allowed"
    assert listed.status_code == 503 and listed.json()["error"]["details"]["reason"] == "address_not_allowed"
    command = json.loads(out.getvalue())
    assert exit_.value.code == 4 and command["error"]["details"]["reason"] == "address_not_allowed"
    assert listener.untouched


@pytest.mark.django_db(transaction=True)  # the MCP handler reads the account in a worker thread
def test_mcp_list_collections__rebinding_after_the_account_was_saved(guarded, django_user_model):
    from resolver import services
    from tests.accounts.test_deadline import call_mcp_tool

    user = django_user_model.objects.create_user("alice")
    with Listener() as listener:
        _saved_account(user, f"http://saved.example:{listener.port}/")
        with FakeDNS({"saved.example": ["127.0.0.1"]}).installed():
            envelope = call_mcp_tool(services.Caller(door="mcp", user=user), "list_collections")
    assert envelope["error"]["code"] == "calendar_unavailable"
    assert envelope["error"]["details"]["reason"] == "address_not_allowed"
    assert listener.untouched


@pytest.mark.parametrize("host", ["[64:ff9b::a9fe:a9fe]", "[::ffff:127.0.0.1]", "2130706433", "[::127.0.0.1]",
                                  "[2002:7f00:1::1]", "[64:ff9b:1::a9fe:a9fe]", "[::ffff:0:a9fe:a9fe]", "192.0.0.192",
                                  "[fec0::1]"])
def test_add__embedded_and_decimal_addresses_refused(guarded, django_user_model, host):
    user = django_user_model.objects.create_user("mallory")
    with pytest.raises(AccountRejected) as caught:
        accounts.add_account(user=user, url=f"http://{host}/", username="u", password="p")
    assert caught.value.details["reason"] == "address_not_allowed"
    assert not CalendarAccount.objects.exists()


def test_add__private_and_unknown_names_get_the_same_answer(guarded, django_user_model):
    user = django_user_model.objects.create_user("mallory")
    answers = []
    with FakeDNS({"db.internal": ["10.0.0.5"]}).installed():
        for url in ("http://db.internal/", "http://no-such-name.invalid/"):
            with pytest.raises(AccountRejected) as caught:
                accounts.add_account(user=user, url=url, username="u", password="p")
            answers.append((caught.value.details["reason"], caught.value.message))
    assert answers[0] == answers[1] and answers[0][0] == "address_not_allowed"
