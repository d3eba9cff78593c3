"""The app's settings: one `RESOLVER` dict in the project settings, with defaults.

Read lazily and reloaded on `setting_changed`, so `override_settings` works in
tests. The app never reads the environment itself: the project's settings do.
"""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.module_loading import import_string

from resolver.domain.judgment import MAX_CANDIDATES

DEFAULTS: dict[str, Any] = {
    # Backends, by dotted path to a class with `from_settings(settings)` (BACKENDS
    # below, built by build_backend). The calendar backend's instances are
    # resolver.domain.ports.CalendarSource.
    "CALENDAR_BACKEND": "resolver.calendars.caldav.CalDAVCalendar",
    # Whose calendar a request reads (resolver/accounts.py): the one account
    # below for everyone, or "resolver.accounts.PerUserAccounts": each person's own.
    "ACCOUNT_BACKEND": "resolver.accounts.SettingsAccount",
    # Per-user accounts: may a person connect a server on a loopback or private
    # address? Off in production (the live check would let anyone probe the
    # site's own network); on for a demo whose CalDAV server is local.
    "ACCOUNT_ALLOW_PRIVATE_ADDRESSES": False,
    # Per-user accounts: how many one person may connect, and how often the
    # site checks an account for them (each check is a login attempt the site
    # makes on someone's server): per person and per client address, in the
    # default cache. "N/second|minute|hour|day", DRF's notation.
    "ACCOUNT_MAX_PER_USER": 10,
    "ACCOUNT_CHECK_RATE": "10/hour",
    # One person's requests that read CalDAV running at once, every door and
    # process together (resolver/throttling.py); one more: throttled, reason in_flight.
    "MAX_IN_FLIGHT_PER_PERSON": 4,
    # The zone a request's time expressions are read in when it names none;
    # None means Django's TIME_ZONE.
    "TIME_ZONE": None,
    # CalDAV
    "CALDAV_URL": "",
    "CALDAV_USERNAME": "",
    "CALDAV_PASSWORD": "",
    "CALDAV_TIMEOUT": 10.0,
    "EVENT_HORIZON_DAYS": 90,
    "EVENT_TIME_RANGE_FILTER": True,
    # Matching: the Snowball language of stems and stopwords (resolver/data/stopwords/)
    # and of time expressions (resolver/data/time/: english, german, french, spanish;
    # English for the others). A request's `language` overrides it.
    "LANGUAGE": "english",
    # The semantic signal (resolver/domain/semantic.py): a multilingual sentence
    # encoder that widens the pool and re-orders a clarification; never resolves.
    "SEMANTIC": True,
    # Its encoder, a backend like the others (resolver/encoders.py).
    "SEMANTIC_ENCODER": "resolver.encoders.MultilingualUSE",
    # Where FreeDict's German, French and Spanish to English dictionaries are
    # (Debian's dict-freedict-* packages; resolver/domain/glossary.py): a title
    # mostly in those languages is also read as its English gloss. Absent
    # files, or "", read titles as they are.
    "GLOSSARY_DIR": "/usr/share/dictd",
    # The relevance model's file (resolver/domain/relevance.py): "" for the one the package ships,
    # None to order candidates by the fusion rule of words and the semantic signal instead.
    "RELEVANCE_MODEL": "",
    # When no live item of the kind asked for holds every word of a reference, read the other kind too, to
    # say so when the reference names one of its items (`other_kind_matched`; resolver/domain/pipeline.py):
    # a second read for such a reference (docs/performance.md). False: never read it.
    "OTHER_KIND": True,
    # Incremental reads: "auto" (WebDAV sync where offered) or "off" (etag-only listing).
    "CALDAV_SYNC": "auto",
    # Concurrent requests for the same collections of one account share one
    # read of the server (at most one in flight and one queued; resolver/calendars/caldav/flight.py).
    "CALDAV_SHARED_READS": True,
    # An unchanged, settled CS:getctag answers from the memo, on a server whose
    # ctag has been seen moving with every change (README "What the reader trusts").
    "CALDAV_CTAG": True,
    # Resources the process-wide parse memo holds; 0 turns it off (every read is full).
    "PARSE_CACHE_ITEMS": 100_000,
    # Bytes one CalDAV answer may have; beyond, calendar_unavailable reason
    # response_too_large: about 17,000 ordinary items; the worst answer of this size resolves
    # within the deadline and 600 MB (docs/security.md, bench/hostile.py --worst).
    "MAX_RESPONSE_BYTES": 8 * 1024 * 1024,
    # Hostile calendars: bounds on the work one resource may cost (README).
    "MAX_RESOURCE_BYTES": 1024 * 1024,
    "MAX_RESOURCE_COMPONENTS": 1000,
    "MAX_COMPONENT_DEPTH": 8,
    "MAX_RESOURCE_OVERRIDES": 1000,
    "MAX_RECURRENCE_DATES": 2000,
    "RECURRENCE_BUDGET": 10000,
    # How long a collection whose server failed on its own time-range filter
    # is read without it before the filter is tried again.
    "SERVER_FILTER_RETRY_SECONDS": 3600,
    # The whole resolution, CalDAV reads and judgment included.
    "RESOLUTION_BUDGET_SECONDS": 20.0,
    # Matching
    # The judge never sees more than this; a setting may lower it, never raise it.
    "MAX_CANDIDATES": MAX_CANDIDATES,
    "MAX_TEXT_LENGTH": 500,
    "MAX_COLLECTION_IDS": 50,
    # API request bodies: a valid request is far smaller (500 characters of text,
    # 50 collection IDs), so anything bigger is refused before it is parsed.
    "MAX_BODY_BYTES": 65536,
    # How deeply a request document may nest (resolver/jsonbound.py): a valid
    # one is 2 deep; deeper is invalid_request at every door. At most 100.
    "MAX_JSON_DEPTH": 32,
    # POST /v1/resolve per user, unless the project's REST_FRAMEWORK names a "resolve" rate.
    "THROTTLE_RATE": "120/min",
    # Jev judgment
    "TYPESAFE_API_KEY": "",
    "TYPESAFE_BASE_URL": "",
    "TYPESAFE_DEFAULT_MODEL": "jev-latest",
    "JEV_CONNECT_TIMEOUT": 3.05,
    "JEV_READ_TIMEOUT": 6.0,
    "JUDGMENT_BUDGET_SECONDS": 8.0,
    # Judge backend, by dotted path to a class with from_settings(settings). Jev is off
    # unless TYPESAFE_* name a key or a base URL.
    "JUDGE_BACKEND": "resolver.judges.jev.JevJudge",
    # OpenAI-compatible judge (RESOLVER_JUDGE=openai)
    "OPENAI_BASE_URL": "",
    "OPENAI_API_KEY": "",
    "OPENAI_MODEL": "",
    # Corrective turns after a defective answer, inside the judgment budget.
    "JUDGE_CORRECTIONS": 1,
    # What a judge backend that is not built in reads in its from_settings (its URL,
    # model, key...): one dict, so adding a judge adds no setting (docs/judge.md).
    "JUDGE_OPTIONS": {},
    "THRESHOLD_MARGIN": 0.1,
    "PROVENANCE_TTL_SECONDS": 900,
    # Clarification page
    "SITE_URL": "",
    "CLARIFICATION_MAX_AGE_SECONDS": 900,
    # MCP over HTTP: the host's request log, a dotted path to an object with
    # collecting() and write_line() (resolver.mcp.http.RequestLogHook); None: none.
    # Not a backend: the object is used as named, nothing is built from the settings.
    "REQUEST_LOG": None,
    # OAuth (docs/oauth.md): /oauth/token/ and /oauth/revoke/ per client address;
    # clients made from Client ID Metadata Documents, at most this many, at most
    # this many last used by one person (the least recently used idle one makes
    # room), deleted when idle (no live grant or token) and unused this long;
    # document fetches per person and per client address on the authorize
    # page, and at most this many at once in a process (resolver/oauth/clients.py).
    "OAUTH_THROTTLE_RATE": "30/min",
    # The reverse proxies in front of the site (addresses or networks, e.g.
    # ["10.0.0.0/8"]): only a request arriving from one of them has its
    # client's address read from X-Forwarded-For (resolver/client_address.py).
    # Empty: none is trusted, the address is the connection's (REMOTE_ADDR).
    "TRUSTED_PROXIES": [],
    "OAUTH_CIMD_MAX_CLIENTS": 500,
    "OAUTH_CIMD_MAX_CLIENTS_PER_PERSON": 20,
    "OAUTH_CIMD_UNUSED_SECONDS": 7 * 24 * 3600,
    "OAUTH_CIMD_FETCH_RATE": "20/hour",
    "OAUTH_CIMD_FETCHES_IN_FLIGHT": 10,
}


# Settings that name a backend: checked at start-up (resolver.checks), built on use by build_backend.
BACKENDS = ("CALENDAR_BACKEND", "JUDGE_BACKEND", "ACCOUNT_BACKEND", "SEMANTIC_ENCODER")

# Dotted paths the docs once gave, and the backend class each now names: a host
# that configured one keeps working (check resolver.W002 asks for the new path).
RENAMED_BACKENDS = {
    # A factory taking `settings=`, before every backend was a class.
    "resolver.calendars.caldav_from_settings": "resolver.calendars.caldav.CalDAVCalendar",
    # The domain's encoder, a class taking no arguments.
    "resolver.domain.semantic.MultilingualUSE": "resolver.encoders.MultilingualUSE",
}


def backend_path(name: str) -> Any:
    """The dotted path a backend setting names, a renamed one replaced by its successor."""
    path = getattr(resolver_settings, name)
    return RENAMED_BACKENDS.get(path, path) if isinstance(path, str) else path


def import_setting(name: str) -> Any:
    """The object a dotted-path setting names; ImportError names the setting."""
    path = backend_path(name)
    try:
        return import_string(path)
    except ImportError as err:
        raise ImportError(f"RESOLVER[{name!r}] = {path!r} could not be imported: {err}") from err


def backend_class(name: str) -> Any:
    """The class a backend setting names; ImproperlyConfigured when it has no `from_settings`."""
    backend = import_setting(name)
    if not callable(getattr(backend, "from_settings", None)):
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(f"RESOLVER[{name!r}] = {backend_path(name)!r} has no from_settings(settings): "
                                   "a backend is a class whose from_settings classmethod builds it.")
    return backend


def build_backend(name: str, settings: Any = None) -> Any:
    """The one way a backend is made: `from_settings(settings)` of the class RESOLVER[name] names.

    `settings` (default: resolver_settings) is any object with the RESOLVER
    settings as attributes: a person's account passes the settings with its own
    URL and credentials (resolver.accounts). Like Django's database and cache
    handlers, the class decides what it reads; the caller only names the setting.
    """
    return backend_class(name).from_settings(resolver_settings if settings is None else settings)


def user_settings() -> dict[str, Any]:
    return dict(getattr(settings, "RESOLVER", {}) or {})


class ResolverSettings:
    def __init__(self) -> None:
        self._cache: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        if name not in DEFAULTS:
            raise AttributeError(f"Unknown resolver setting: {name}")
        if name not in self._cache:
            value = user_settings().get(name, DEFAULTS[name])
            if name == "TIME_ZONE" and value is None:
                value = settings.TIME_ZONE
            self._cache[name] = value
        return self._cache[name]

    def reload(self) -> None:
        self._cache.clear()


resolver_settings = ResolverSettings()


@receiver(setting_changed)
def _reload(*, setting: str, **kwargs: Any) -> None:
    if setting in ("RESOLVER", "TIME_ZONE"):
        resolver_settings.reload()
