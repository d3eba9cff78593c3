"""resolver/accounts.py: whose calendar a request reads, connecting accounts, collection IDs."""
from __future__ import annotations

import dataclasses
import http.server
import socket
import threading
from datetime import timezone
from typing import Iterator

import pytest

from resolver import accounts
from resolver.calendars.memory import MemoryCalendar
from resolver.domain.errors import AccountRejected, CollectionNotFound, NoCalendarAccount
from resolver.domain.items import Item, Kind, derive_item_id

pytestmark = pytest.mark.django_db
UTC = timezone.utc


def _task(uid: str, title: str, collection: str = "work") -> Item:
    return Item(item_id=derive_item_id(f"/bob/{collection}/", uid), uid=uid, collection_id=collection, title=title,
                etag='"1"', kind=Kind.TASK)


def test_accounts_calendar__namespaces_collections_and_items():
    """The same collection path and UID on two accounts are two collections and two items."""
    same = _task("report", "Quarterly report")
    calendar = accounts.AccountsCalendar([("home", MemoryCalendar([same])), ("work", MemoryCalendar([same]))])
    assert [c.collection_id for c in calendar.collections()] == ["home/work", "work/work"]
    result = calendar.fetch(kind=Kind.TASK, collection_ids=None, time_zone=UTC)
    assert [i.collection_id for i in result.items] == ["home/work", "work/work"]
    assert len({i.item_id for i in result.items}) == 2 and same.item_id not in {i.item_id for i in result.items}
    assert result.collections_searched == ("home/work", "work/work")
    only_work = calendar.fetch(kind=Kind.TASK, collection_ids=["work/work"], time_zone=UTC)
    assert [i.collection_id for i in only_work.items] == ["work/work"]


def test_accounts_calendar__closed_items_are_namespaced_and_kept_apart():
    """A done task of one account is that account's, with its namespaced ID, and never among the live items."""
    done = dataclasses.replace(_task("rice", "Buy rice"), status="COMPLETED")
    calendar = accounts.AccountsCalendar([("home", MemoryCalendar([_task("r", "R")], closed=[done])),
                                          ("work", MemoryCalendar([_task("w", "W")]))])
    result = calendar.fetch(kind=Kind.TASK, collection_ids=None, time_zone=UTC)
    assert [(i.uid, i.collection_id) for i in result.closed] == [("rice", "home/work")]
    assert result.closed[0].item_id == accounts.namespaced_item_id("home", done.item_id)
    assert "rice" not in {i.uid for i in result.items}
    assert calendar.fetch(kind=Kind.TASK, collection_ids=["work/work"], time_zone=UTC).closed == ()


def test_accounts_calendar__ids_do_not_move_when_an_account_is_added():
    item = _task("report", "Quarterly report")
    alone = accounts.AccountsCalendar([("home", MemoryCalendar([item]))]).fetch(
        kind=Kind.TASK, collection_ids=None, time_zone=UTC)
    both = accounts.AccountsCalendar([("home", MemoryCalendar([item])), ("a-first", MemoryCalendar([]))]).fetch(
        kind=Kind.TASK, collection_ids=None, time_zone=UTC)
    assert alone.items[0].item_id == both.items[0].item_id
    assert alone.items[0].collection_id == both.items[0].collection_id == "home/work"


class Since(MemoryCalendar):
    """A source with the optional `fetch_since`: it records the instants it was given."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.given = []

    def fetch_since(self, *, kind, collection_ids, time_zone, since):
        self.given.append(since)
        return self.fetch(kind=kind, collection_ids=collection_ids, time_zone=time_zone)


def test_accounts_calendar__a_second_read_goes_to_each_account_as_it_can_take_it():
    """fetch_since: an account whose source has one is given the instant; one without is read with fetch. Every
    ID is namespaced as in `fetch`, and a first read (`fetch`) gives no account an instant."""
    can, cannot = Since([_task("r", "Report")]), MemoryCalendar([_task("w", "Weekly")])
    calendar = accounts.AccountsCalendar([("home", can), ("work", cannot)])
    first = calendar.fetch(kind=Kind.TASK, collection_ids=None, time_zone=UTC)
    assert can.given == []
    again = calendar.fetch_since(kind=Kind.TASK, collection_ids=None, time_zone=UTC, since=first.read_at)
    assert can.given == [first.read_at]
    assert [i.item_id for i in again.items] == [i.item_id for i in first.items]
    assert again.collections_searched == ("home/work", "work/work")


@pytest.mark.parametrize("wanted", [["work"], ["nope/work"], ["home/"], ["home/nope"]])
def test_accounts_calendar__unknown_collection_is_named_as_given(wanted):
    calendar = accounts.AccountsCalendar([("home", MemoryCalendar([_task("r", "R")]))])
    with pytest.raises(CollectionNotFound) as caught:
        calendar.fetch(kind=Kind.TASK, collection_ids=wanted, time_zone=UTC)
    assert caught.value.details["collection_ids"] == wanted


def test_unique_slug__from_the_label_then_numbered():
    assert accounts.unique_slug("Work Server", []) == "work-server"
    assert accounts.unique_slug("Work Server", ["work-server"]) == "work-server-2"
    assert accounts.unique_slug("Work Server", ["work-server", "work-server-2"]) == "work-server-3"
    assert accounts.unique_slug("///", []) == "calendar"
    assert "/" not in accounts.unique_slug("a/b", [])


def test_per_user__nobody_and_no_account_get_their_own_error(per_user, django_user_model):
    carol = django_user_model.objects.create_user("carol")
    for user in (None, carol):
        with pytest.raises(NoCalendarAccount) as caught:
            accounts.calendar_for(user)
        assert caught.value.code == "no_calendar_account" and caught.value.http_status == 409
        assert caught.value.exit_code == 2


def test_settings_account__is_the_default_and_the_same_for_everyone(settings, radicale, django_user_model):
    settings.RESOLVER = radicale.settings()
    someone = django_user_model.objects.create_user("someone")
    assert {c.collection_id for c in accounts.calendar_for(None).collections()} == \
        {c.collection_id for c in accounts.calendar_for(someone).collections()} >= {"work", "personal"}


def test_per_user__each_reads_only_their_own_accounts(people):
    alice = accounts.calendar_for(people.alice)
    bob = accounts.calendar_for(people.bob)
    assert sorted(c.collection_id for c in alice.collections()) == ["home/personal", "home/work"]
    assert sorted(c.collection_id for c in bob.collections()) == ["home/personal", "home/work", "work/work"]
    alice_uids = {i.uid for i in alice.fetch(kind=Kind.TASK, collection_ids=None, time_zone=UTC).items}
    bob_items = bob.fetch(kind=Kind.TASK, collection_ids=None, time_zone=UTC).items
    assert alice_uids == {"alice-report", "alice-secret"}
    assert sorted(i.uid for i in bob_items) == ["bob-only", "bob-report", "bob-report", "bob-server-b"]
    assert len({i.item_id for i in bob_items}) == 4


# --- connecting ---------------------------------------------------------------------


def test_add_account__verified_live_and_the_password_sealed(per_user, django_user_model):
    from resolver.models import CalendarAccount

    dana = django_user_model.objects.create_user("dana")
    url, username, password = per_user.alice
    account, collections = accounts.add_account(user=dana, url=url, username=username, password=password,
                                                label="My calendars")
    assert account.slug == "my-calendars"
    assert {c.collection_id for c in collections} == {"work", "personal"}
    stored = CalendarAccount.objects.values_list("password_sealed", flat=True).get(pk=account.pk)
    assert password not in stored and stored.startswith("v2$gAAAAA")  # bound to its row, then Fernet
    assert password not in repr(account) and password not in str(account)
    assert password not in repr(account.as_account())


@pytest.mark.parametrize("which, reason", [
    ("wrong_password", "unauthorized"),
    ("closed_port", "unreachable"),
    ("plain_http", "not_caldav"),
    ("no_scheme", "invalid"),
    ("credentials_in_url", "invalid"),
])
def test_add_account__refused_with_a_reason_and_nothing_saved(per_user, django_user_model, plain_http_server,
                                                               which, reason):
    from resolver.models import CalendarAccount

    dana = django_user_model.objects.create_user("dana")
    url, username, password = per_user.alice
    if which == "wrong_password":
        password = "not the password"
    elif which == "closed_port":
        url = f"http://127.0.0.1:{_closed_port()}/"
    elif which == "plain_http":
        url = plain_http_server
    elif which == "no_scheme":
        url = url.split("://", 1)[1]
    elif which == "credentials_in_url":
        url = url.replace("://", f"://{username}:{password}@")
    with pytest.raises(AccountRejected) as caught:
        accounts.add_account(user=dana, url=url, username=username, password=password)
    assert caught.value.details == {"reason": reason} and caught.value.code == "account_rejected"
    assert password not in caught.value.message
    assert not CalendarAccount.objects.filter(user=dana).exists()


def test_add_account__private_addresses_refused_unless_allowed(per_user, settings, django_user_model):
    settings.RESOLVER = {**settings.RESOLVER, "ACCOUNT_ALLOW_PRIVATE_ADDRESSES": False}
    dana = django_user_model.objects.create_user("dana")
    url, username, password = per_user.alice
    for address in (url, "http://10.1.2.3/", "http://169.254.169.254/", "http://[::1]:5232/"):
        with pytest.raises(AccountRejected) as caught:
            accounts.add_account(user=dana, url=address, username=username, password=password)
        assert caught.value.details == {"reason": "address_not_allowed"}


def test_remove_account__only_ones_own(people):
    alice_account = accounts.accounts_of(people.alice)[0]
    assert accounts.remove_account(user=people.bob, account_id=alice_account.pk) is False
    assert accounts.remove_account(user=people.bob, account_id="not a number") is False
    assert accounts.accounts_of(people.alice) == [alice_account]
    assert accounts.remove_account(user=people.alice, account_id=alice_account.pk) is True
    with pytest.raises(NoCalendarAccount):
        accounts.calendar_for(people.alice)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def plain_http_server() -> Iterator[str]:
    """A web server that is not CalDAV: every request gets an HTML page."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def _page(self) -> None:
            body = b"<html><body>Welcome</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PROPFIND = do_REPORT = do_OPTIONS = _page

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_namespacer__reuses_copies_while_the_reader_hands_back_the_same_items():
    first, second = _task("a", "A"), _task("b", "B")
    namespacer = accounts.Namespacer("home")
    once = namespacer.items(Kind.TASK, [first, second])
    again = namespacer.items(Kind.TASK, [first, second])
    assert [a is b for a, b in zip(once, again)] == [True, True]
    changed = dataclasses.replace(second, etag='"2"')
    after = namespacer.items(Kind.TASK, [first, changed])
    assert after[0] is once[0] and after[1] is not once[1] and after[1].etag == '"2"'
    assert after[1].item_id == once[1].item_id and after[1].collection_id == "home/work"


def test_namespace_registry__one_per_connected_account():
    registry = accounts.NamespaceRegistry(max_accounts=2)
    alice_home, bob_home = registry.get(1, "home"), registry.get(2, "home")
    assert alice_home is not bob_home and registry.get(1, "home") is alice_home
    item = _task("a", "A")
    assert alice_home.items(Kind.TASK, [item])[0] is not bob_home.items(Kind.TASK, [item])[0]
    registry.get(3, "work")
    assert len(registry) == 2 and registry.get(1, "home") is alice_home  # 2 was least recently used
    registry.drop(1)
    assert registry.get(1, "home") is not alice_home
