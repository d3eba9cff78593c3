"""Whose calendar a request reads: the account backend, `RESOLVER["ACCOUNT_BACKEND"]`.

    SettingsAccount   (the default) the one account in RESOLVER (CALDAV_URL,
                      CALDAV_USERNAME, CALDAV_PASSWORD) for everyone: today's behaviour.
    PerUserAccounts   each person's own CalDAV accounts (resolver.models.CalendarAccount):
                      every request reads only the accounts of the person making it, and
                      someone with none gets `no_calendar_account`, never anyone else's.

`calendar_for(user)` is the one function a door's service call uses to obtain
the calendar source for its caller.

Collection IDs with per-user accounts are `<account>/<collection>`: the
account's slug (fixed when the account is connected: its label, else the
server's host name, slugified, with `-2`, `-3`... when the person already has
that slug; a later label change does not change it), a slash, and the
collection's own ID on its server (the last segment of its URL path). A slash
never occurs in either part, so the ID is unambiguous across a person's
accounts, and it does not change when other accounts come or go. Item IDs are
likewise namespaced by the account slug, so the same calendar copied to two
servers gives two distinct items.
"""
from __future__ import annotations

import dataclasses
import hashlib
import threading
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any, Iterable, Protocol, Sequence
from urllib.parse import urlsplit

from django.db import transaction
from django.utils.text import slugify

from resolver import deadline
from resolver.conf import backend_class, build_backend, resolver_settings
from resolver.connected import ConnectedAccount
from resolver.domain.errors import (
    AccountRejected, CalendarUnavailable, CollectionNotFound, NoCalendarAccount, ResolverError,
)
from resolver.domain.items import Collection, Item, Kind
from resolver.domain.ports import CalendarSource
from resolver.registry import Registry, held, swap

if TYPE_CHECKING:
    from resolver.domain.ports import FetchResult
    from resolver.models import CalendarAccount

SEPARATOR = "/"
MAX_SLUG_LENGTH = 40


class AccountBackend(Protocol):
    # Whether each person reads their own accounts (the doors then offer to connect one).
    per_user: bool

    def calendar_for(self, user: Any) -> CalendarSource: ...


def backend() -> AccountBackend:
    return build_backend("ACCOUNT_BACKEND")


def calendar_for(user: Any) -> CalendarSource:
    """The calendar source the request of `user` (None for nobody) reads, per the account backend."""
    return backend().calendar_for(user)


def per_user() -> bool:
    """Whether the configured account backend reads each person's own accounts: a property of
    its class (`per_user`), so a subclass of PerUserAccounts is per-user too."""
    return bool(getattr(backend_class("ACCOUNT_BACKEND"), "per_user", False))


def source_for(account: ConnectedAccount) -> CalendarSource:
    """The calendar source reading one account: the configured CALENDAR_BACKEND, built as the
    settings' own account builds it, with this account's URL and credentials in their place."""
    return build_backend("CALENDAR_BACKEND", _AccountSettings(account))  # type: ignore[no-any-return]


class _AccountSettings:
    """resolver_settings, with one account's URL and credentials."""

    def __init__(self, account: ConnectedAccount) -> None:
        # A person's account connects only to public addresses, checked on every connection.
        self._own = {"CALDAV_URL": account.url, "CALDAV_USERNAME": account.username,
                     "CALDAV_PASSWORD": account.password,
                     "CALDAV_CHECK_ADDRESSES": not resolver_settings.ACCOUNT_ALLOW_PRIVATE_ADDRESSES}

    def __getattr__(self, name: str) -> Any:
        own = self.__dict__["_own"]
        return own[name] if name in own else getattr(resolver_settings, name)

    def __repr__(self) -> str:
        return "<account settings>"


class SettingsAccount:
    """The one account in RESOLVER, for every caller (CALENDAR_BACKEND builds its source)."""

    per_user = False

    def __init__(self, settings: Any) -> None:
        self.settings = settings

    @classmethod
    def from_settings(cls, settings: Any) -> SettingsAccount:
        return cls(settings)

    def calendar_for(self, user: Any) -> CalendarSource:
        return build_backend("CALENDAR_BACKEND", self.settings)


class PerUserAccounts:
    """Each person's own accounts; nobody, and anybody without one, gets NoCalendarAccount."""

    per_user = True

    @classmethod
    def from_settings(cls, settings: Any) -> PerUserAccounts:
        # Each account's source reads the settings itself (source_for), with the account's own URL.
        return cls()

    def calendar_for(self, user: Any) -> CalendarSource:
        if user is None or not getattr(user, "is_authenticated", False) or not getattr(user, "is_active", False):
            raise NoCalendarAccount()
        from resolver.models import CalendarAccount

        rows = list(CalendarAccount.objects.filter(user=user).order_by("slug"))
        if not rows:
            raise NoCalendarAccount()
        registry = namespaces()
        return AccountsCalendar([(row.slug, source_for(row.as_account())) for row in rows],
                                namespacers={row.slug: registry.get(row.pk, row.slug) for row in rows})


# --- several accounts as one calendar source ------------------------------------


def namespaced_item_id(slug: str, item_id: str) -> str:
    return "itm_" + hashlib.sha256(f"{slug}\x00{item_id}".encode("utf-8")).hexdigest()[:32]


class Namespacer:
    """One connected account's items with namespaced IDs, reused while its reader hands back
    the same Item objects (an unchanged resource): rebuilding a thousand frozen items costs
    more than the rest of a warm resolution. Per kind, it keeps what the last read returned;
    the source item is kept with its copy, so identity cannot be confused by a reused id()."""

    def __init__(self, slug: str) -> None:
        self.slug = slug
        self._last: dict[tuple[Kind, bool], dict[int, tuple[Item, Item]]] = {}
        self._lock = threading.Lock()

    def items(self, kind: Kind, source: Sequence[Item], *, closed: bool = False) -> list[Item]:
        """`source` namespaced; `closed`: they are FetchResult.closed, remembered apart from the live ones."""
        with self._lock:
            known = self._last.get((kind, closed), {})
        prefix = self.slug + SEPARATOR
        fresh: dict[int, tuple[Item, Item]] = {}
        out: list[Item] = []
        for item in source:
            pair = known.get(id(item))
            if pair is None or pair[0] is not item:
                pair = (item, dataclasses.replace(item, collection_id=prefix + item.collection_id,
                                                  item_id=namespaced_item_id(self.slug, item.item_id)))
            fresh[id(item)] = pair
            out.append(pair[1])
        with self._lock:
            self._last[(kind, closed)] = fresh
        return out

    def __len__(self) -> int:
        with self._lock:
            return sum(len(m) for m in self._last.values())


class NamespaceRegistry(Registry[tuple[Any, str], Namespacer]):
    """One Namespacer per connected account (its row), created on first use, least recently used
    dropped beyond `max_accounts` (the process's registry convention, resolver/registry.py)."""

    def __init__(self, *, max_accounts: int = 1000) -> None:
        super().__init__(max_accounts)

    def create(self, key: tuple[Any, str]) -> Namespacer:
        return Namespacer(key[1])

    def get(self, account_id: Any, slug: str) -> Namespacer:  # type: ignore[override]
        return super().get((account_id, slug))

    def drop(self, account_id: Any) -> None:  # type: ignore[override]
        self.drop_where(lambda key: key[0] == account_id)


def namespaces() -> NamespaceRegistry:
    """The process's registry: owned by the app's config (ResolverConfig.namespaces), not by this module."""
    return held("namespaces")  # type: ignore[no-any-return]


def use_namespaces(registry: NamespaceRegistry) -> NamespaceRegistry:
    """Make `registry` the process's and return the one it replaces (tests, benchmarks)."""
    return swap("namespaces", registry)


class AccountsCalendar:
    """One person's accounts as one CalendarSource, every collection and item ID namespaced by account."""

    def __init__(self, sources: Sequence[tuple[str, CalendarSource]], *,
                 namespacers: dict[str, Namespacer] | None = None) -> None:
        self._sources = dict(sources)
        self._namespacers = namespacers or {}

    def _split(self, collection_id: str) -> tuple[str, str] | None:
        slug, sep, own = collection_id.partition(SEPARATOR)
        if not sep or slug not in self._sources or not own:
            return None
        return slug, own

    def collections(self) -> Sequence[Collection]:
        found: list[Collection] = []
        for slug, source in self._sources.items():
            found += [dataclasses.replace(c, collection_id=f"{slug}{SEPARATOR}{c.collection_id}")
                      for c in source.collections()]
        return found

    def fetch(self, *, kind: Kind, collection_ids: Sequence[str] | None, time_zone: tzinfo) -> FetchResult:
        return self._fetch(kind=kind, collection_ids=collection_ids, time_zone=time_zone, since=None)

    def fetch_since(self, *, kind: Kind, collection_ids: Sequence[str] | None, time_zone: tzinfo,
                    since: datetime) -> FetchResult:
        """`fetch` for the same request's second read: each account's source answers it as it can
        (resolver.domain.ports.fetch_again)."""
        return self._fetch(kind=kind, collection_ids=collection_ids, time_zone=time_zone, since=since)

    def _fetch(self, *, kind: Kind, collection_ids: Sequence[str] | None, time_zone: tzinfo,
               since: datetime | None) -> FetchResult:
        from resolver.domain.ports import FetchResult, fetch_again

        wanted: dict[str, list[str] | None]
        if collection_ids:
            wanted = {}
            unknown = []
            for cid in dict.fromkeys(collection_ids):
                split = self._split(cid)
                if split is None:
                    unknown.append(cid)
                else:
                    wanted.setdefault(split[0], []).append(split[1])  # type: ignore[union-attr]
            if unknown:
                raise CollectionNotFound(details={"collection_ids": unknown})
        else:
            wanted = {slug: None for slug in self._sources}

        items: list[Item] = []
        closed: list[Item] = []
        skipped: list[Any] = []
        searched: list[str] = []
        filter_skipped: list[str] = []
        requests = 0
        read_at = None
        memo = None
        for slug, own_ids in wanted.items():
            try:
                result = fetch_again(self._sources[slug], kind=kind, collection_ids=own_ids, time_zone=time_zone,
                                     since=since)
            except CollectionNotFound as err:
                ids = err.details.get("collection_ids") or own_ids or []
                raise CollectionNotFound(details={"collection_ids": [f"{slug}{SEPARATOR}{c}" for c in ids]}) from None
            prefix = slug + SEPARATOR
            namespacer = self._namespacers.get(slug) or Namespacer(slug)
            items += namespacer.items(kind, result.items)
            if result.closed:
                closed += namespacer.items(kind, result.closed, closed=True)
            skipped += result.skipped
            searched += [prefix + c for c in result.collections_searched]
            filter_skipped += [prefix + c for c in result.server_filter_skipped]
            requests += result.requests
            memo = memo or result.memo  # one person's readers: any of them may keep the merged titles' index
            if result.read_at is not None and (read_at is None or result.read_at < read_at):
                read_at = result.read_at  # the earliest read: what the answer can vouch for
        return FetchResult(items=tuple(items), skipped=tuple(skipped), requests=requests,
                           collections_searched=tuple(searched), read_at=read_at,
                           server_filter_skipped=tuple(filter_skipped), memo=memo, closed=tuple(closed))


# --- connecting an account -------------------------------------------------------


def _refuse(reason: str, message: str) -> AccountRejected:
    return AccountRejected(message, details={"reason": reason})


NOT_ALLOWED = ("That server's name does not lead to a public address this site connects to "
               "(it is unknown, or on a private or local network).")


def check_url(url: str) -> str:
    """An http(s) URL with a host, on a public address unless RESOLVER["ACCOUNT_ALLOW_PRIVATE_ADDRESSES"].

    Anyone signed in may name a server, and the live check makes this server
    connect to it: without this, a person could make it probe the site's own
    network (databases, metadata services). This is the early, friendly answer;
    the guarantee is that every connection checks again, on the address it
    connects to (resolver/calendars/caldav/connections.py). A private name and
    an unknown one get the same answer, so the form maps nothing.
    """
    from resolver.calendars.caldav import addresses
    from resolver.watchdog import LookupTimedOut

    url = (url or "").strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _refuse("invalid", "Give the server's address as an http:// or https:// URL.")
    if parts.username or parts.password:
        raise _refuse("invalid", "Give the username and password in their own fields, not in the URL.")
    try:
        host = addresses.normalise_host(parts.hostname)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as err:  # BadHostName, or a port out of range
        raise _refuse("invalid", str(err) if isinstance(err, addresses.BadHostName)
                      else "The server's port is not valid.") from None
    if not resolver_settings.ACCOUNT_ALLOW_PRIVATE_ADDRESSES:
        try:
            addresses.resolve_checked(host, port)
        except addresses.AddressRefused:
            raise _refuse("address_not_allowed", NOT_ALLOWED) from None
        except LookupTimedOut:
            raise _refuse("unreachable", "The server could not be reached (no answer, or too slow).") from None
    return url


def verify(url: str, username: str, password: str) -> list[Collection]:
    """Read the account's collections live; AccountRejected (with a reason a person can act on) if that fails."""
    url = check_url(url)
    source = source_for(ConnectedAccount(key="unsaved", url=url, username=username, password=password))
    try:
        found = list(source.collections())
    except CalendarUnavailable as err:
        reason = str(err.details.get("reason", ""))
        if reason == "unauthorized":
            raise _refuse("unauthorized", "The server refused this username and password.") from None
        if reason == "address_not_allowed":
            raise _refuse("address_not_allowed", NOT_ALLOWED) from None
        if reason == "forbidden":
            raise _refuse("forbidden", "The server refused access to that address (not this user's calendars?).") from None
        if reason in ("unreachable", "timeout"):
            raise _refuse("unreachable", "The server could not be reached (no answer, or too slow).") from None
        raise _refuse("not_caldav", "That address answered, but not as a CalDAV server.") from None
    except CollectionNotFound:
        raise _refuse("not_caldav", "That address answered, but not as a CalDAV server.") from None
    # A web server that is not CalDAV can look like a principal without calendars
    # to the discovery; a CalDAV server says so in OPTIONS (RFC 4791, 5.1).
    if not found and not _says_calendar_access(source):
        raise _refuse("not_caldav", "That address answered, but not as a CalDAV server.")
    return found


def _says_calendar_access(source: CalendarSource) -> bool:
    """OPTIONS without credentials or redirects, through the reader's client (its address policy, its deadline)."""
    probe = getattr(source, "says_calendar_access", None)
    try:
        return bool(probe()) if probe is not None else False
    except CalendarUnavailable as err:
        if err.details.get("reason") == "address_not_allowed":
            raise _refuse("address_not_allowed", NOT_ALLOWED) from None
        raise _refuse("unreachable", "The server could not be reached (no answer, or too slow).") from None


def unique_slug(wanted: str, taken: Iterable[str]) -> str:
    base = slugify(wanted)[:MAX_SLUG_LENGTH - 4].strip("-") or "calendar"
    taken = set(taken)
    slug, n = base, 2
    while slug in taken:
        slug, n = f"{base}-{n}", n + 1
    return slug


def _check_limits(user: Any, client_address: str | None) -> None:
    """At most ACCOUNT_MAX_PER_USER accounts; at most ACCOUNT_CHECK_RATE checks per person and per client address."""
    from resolver.models import CalendarAccount
    from resolver.throttling import AttemptLimiter

    limit = int(resolver_settings.ACCOUNT_MAX_PER_USER)
    if CalendarAccount.objects.filter(user=user).count() >= limit:
        raise _refuse("too_many_accounts", f"You have connected {limit} accounts, the most this site allows; "
                                           "remove one to connect another.")
    keys = [f"user:{getattr(user, 'pk', None)}"] + ([f"address:{client_address}"] if client_address else [])
    AttemptLimiter("account_check", str(resolver_settings.ACCOUNT_CHECK_RATE)).attempt(keys)


@deadline.bounded  # the live check, the OPTIONS probe and all, under the request's deadline
def add_account(*, user: Any, url: str, username: str, password: str, label: str = "",
                client_address: str | None = None) -> tuple[CalendarAccount, list[Collection]]:
    """Verify the account live, then save it for `user`. Raises AccountRejected or Throttled; saves nothing then.

    `client_address` (the page's REMOTE_ADDR) is throttled as well as the person.
    """
    from resolver.models import CalendarAccount

    label = (label or "").strip()
    username = (username or "").strip()
    if not username or not password:
        raise _refuse("invalid", "Give the username and the (app) password.")
    if len(label) > 100 or len(username) > 200 or len(url) > 500 or len(password) > 1000:
        raise _refuse("invalid", "A field is too long.")
    _check_limits(user, client_address)
    collections = verify(url, username, password)
    taken = CalendarAccount.objects.filter(user=user).values_list("slug", flat=True)
    slug = unique_slug(label or urlsplit(url.strip()).hostname or "calendar", taken)
    account = CalendarAccount(user=user, slug=slug, label=label, url=url.strip(), username=username)
    with transaction.atomic():  # the password is sealed for the row's ID, known once saved
        account.save()
        account.set_password(password)
        account.save(update_fields=["password_sealed"])
    return account, collections


def accounts_of(user: Any) -> list[CalendarAccount]:
    from resolver.models import CalendarAccount

    return list(CalendarAccount.objects.filter(user=user).order_by("slug"))


def remove_account(*, user: Any, account_id: Any) -> bool:
    """Delete `user`'s account `account_id`; False when they have no such account (another's included)."""
    from resolver.models import CalendarAccount

    try:
        pk = int(account_id)
    except (TypeError, ValueError):
        return False
    row = CalendarAccount.objects.filter(user=user, pk=pk).first()
    if row is None:
        return False
    forget(row)
    row.delete()
    return True


def forget(row: CalendarAccount) -> None:
    """Drop what the process remembers of a removed account: its namespaced items and its reader."""
    namespaces().drop(row.pk)
    try:
        from resolver.calendars.caldav import readers

        readers().drop(source_for(row.as_account()).account)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - an unreadable password: nothing was ever read for it
        pass


@dataclass(frozen=True)
class AccountState:
    """One account as its owner's overview shows it: its collections, or why they could not be read."""

    account: CalendarAccount
    collections: list[Collection] | None
    error: ResolverError | None


@deadline.bounded  # one deadline for the whole overview, however many accounts
def overview(user: Any) -> list[AccountState]:
    """Each of `user`'s accounts read live; past the deadline, the rest say calendar_unavailable/timeout."""
    states = []
    for account in accounts_of(user):
        try:
            states.append(AccountState(account, collections_of(account), None))
        except ResolverError as err:
            states.append(AccountState(account, None, err))
    return states


def collections_of(account: CalendarAccount) -> list[Collection]:
    """The account's collections as the person's IDs name them; CalendarUnavailable when unreadable."""
    return [dataclasses.replace(c, collection_id=f"{account.slug}{SEPARATOR}{c.collection_id}")
            for c in source_for(account.as_account()).collections()]
