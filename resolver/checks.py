"""System checks: configuration problems fail loudly at start-up, each naming its setting.

| id | what |
|---|---|
| resolver.E001 | SECRET_KEY is the development default while DEBUG is off |
| resolver.E002 | an unknown key in RESOLVER (a typo would silently fall back to a default) |
| resolver.E003 | a backend path (CALENDAR_BACKEND, JUDGE_BACKEND, ACCOUNT_BACKEND, SEMANTIC_ENCODER) that does not import, or names no class with from_settings(settings) |
| resolver.E004 | a URL setting without an http(s) scheme and host |
| resolver.E005 | TIME_ZONE is not an IANA zone |
| resolver.E006 | a limit that is not a positive integer, or MAX_CANDIDATES above 19 |
| resolver.W001 | CALDAV_URL is empty while the CalDAV backend is in use |
| resolver.W002 | a backend path the docs once gave (resolver.conf.RENAMED_BACKENDS): it still works, under its new name |
| resolver.E007 | an app the resolver needs is missing from INSTALLED_APPS |
| resolver.E008 | a middleware the page and the API's session login need is missing from MIDDLEWARE |
| resolver.E009 | per-user accounts (their passwords encrypted with SECRET_KEY) with a development SECRET_KEY |
| resolver.E010 | RELEVANCE_MODEL names a file that is not a relevance model this code reads |
| resolver.E011 | the class JUDGE_BACKEND or SEMANTIC_ENCODER names lacks a member of its protocol (resolver.domain.ports.Judge, resolver.domain.title_vectors.Encoder), or its judges cannot be kept one per configuration |
| resolver.E012 | CALENDAR_BACKEND builds a class that lacks a method the app calls (resolver/calendars/backend.py) |

The app asks nothing else of the host project: no settings module, middleware,
error handler or template of lifeproject's (README, "Add the resolver to your project").

Every check here carries the tag `resolver` (TAG): `manage.py resolve` runs
these alone, not the URL, admin and model checks, which would import every
view (and with them DRF and the schema generator) on each call of a
command that starts a fresh process every time.
"""
from __future__ import annotations

import zoneinfo
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core import checks

from resolver.conf import (
    BACKENDS, DEFAULTS, RENAMED_BACKENDS, backend_path, import_setting, resolver_settings, user_settings,
)
from resolver.domain.judgment import MAX_CANDIDATES

TAG = "resolver"
_URL_SETTINGS = ("CALDAV_URL", "TYPESAFE_BASE_URL", "SITE_URL")
_LIMITS = ("MAX_TEXT_LENGTH", "MAX_COLLECTION_IDS", "MAX_CANDIDATES", "MAX_BODY_BYTES", "MAX_RESPONSE_BYTES",
           "MAX_JSON_DEPTH")


# What the host project must have; everything else the app sets on its own views.
REQUIRED_APPS = (
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "rest_framework",
    "rest_framework.authtoken",
)
REQUIRED_MIDDLEWARE = (
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
)


def is_development_key(secret_key: str) -> bool:
    """The project's declared development key (DEV_SECRET_KEY), or one `startproject` generated."""
    dev_key = getattr(settings, "DEV_SECRET_KEY", None)
    return bool(dev_key and secret_key == dev_key) or secret_key.startswith("django-insecure-")


@checks.register(checks.Tags.security, TAG, deploy=False)
def check_secret_key(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    if not settings.DEBUG and is_development_key(str(settings.SECRET_KEY)):
        return [
            checks.Error(
                "SECRET_KEY is the development default while DEBUG is off.",
                hint="Set the SECRET_KEY environment variable to a long random value.",
                id="resolver.E001",
            )
        ]
    return []


@checks.register(TAG)
def check_host_project(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """The few things the app needs from the project that installs it, each named."""
    from django.apps import apps

    problems = [
        checks.Error(f"INSTALLED_APPS lacks {name!r}, which the resolver needs.",
                     hint=f"Add {name!r} to INSTALLED_APPS (README: Add the resolver to your project).",
                     id="resolver.E007")
        for name in REQUIRED_APPS if not apps.is_installed(name)
    ]
    middleware = list(getattr(settings, "MIDDLEWARE", None) or ())
    problems += [
        checks.Error(f"MIDDLEWARE lacks {name!r}, which the resolver's page and session login need.",
                     hint=f"Add {name!r} to MIDDLEWARE, as django-admin startproject does.",
                     id="resolver.E008")
        for name in REQUIRED_MIDDLEWARE if name not in middleware
    ]
    return problems


@checks.register(checks.Tags.security, TAG)
def check_account_key(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """People's CalDAV passwords are encrypted with a key derived from SECRET_KEY (resolver/sealing.py)."""
    if resolver_settings.ACCOUNT_BACKEND != "resolver.accounts.PerUserAccounts":
        return []
    key = str(getattr(settings, "SECRET_KEY", "") or "")
    if is_development_key(key) or len(key) < 50 or len(set(key)) < 5:
        return [checks.Error(
            "RESOLVER['ACCOUNT_BACKEND'] is PerUserAccounts, which encrypts people's CalDAV passwords with a key "
            "derived from SECRET_KEY, and SECRET_KEY is a development or weak key.",
            hint="Set SECRET_KEY to a long random value kept secret (at least 50 characters); "
                 "rotate through SECRET_KEY_FALLBACKS and `manage.py calendar_accounts rotate`.",
            id="resolver.E009")]
    return []


@checks.register(TAG)
def check_resolver_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    return [*_unknown_keys(), *_backends(), *_urls(), *_time_zone(), *_limits(), *_caldav_url_set(),
            *_relevance_model()]


@checks.register(TAG)
def check_backend_contracts(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """The judge and encoder classes the settings name have everything the app uses of them, by name.

    A judge or encoder that lacks a member would otherwise fail on the first
    request that reaches it (or, for a judge that cannot be shared, open new
    connections on every request). A path that does not import is E003's.
    """
    from resolver.domain.ports import Judge
    from resolver.domain.title_vectors import Encoder
    from resolver.judges.registry import sharing_problem

    problems: list[checks.CheckMessage] = []
    for name, protocol in (("JUDGE_BACKEND", Judge), ("SEMANTIC_ENCODER", Encoder)):
        try:
            backend = import_setting(name)
        except ImportError:
            continue
        if not isinstance(backend, type):
            continue  # E003 names what is not a class with from_settings
        lacking = [member for member in protocol_members(protocol) if not has_member(backend, member)]
        if lacking:
            problems.append(checks.Error(
                f"RESOLVER[{name!r}] = {backend_path(name)!r} lacks {', '.join(lacking)}.",
                hint=f"Give it every member of {protocol.__module__}.{protocol.__name__} "
                     "(docs/judge.md, \"Adding a judge\"; docs/retrieval.md, \"Adding an encoder\").",
                id="resolver.E011"))
        problem = sharing_problem(backend) if protocol is Judge else None
        if problem is not None:
            problems.append(checks.Error(
                f"RESOLVER[{name!r}] = {backend_path(name)!r} cannot be kept one per configuration: {problem}.",
                hint="Make it a frozen dataclass whose connections are a compare=False field "
                     "(docs/judge.md, \"Adding a judge\").", id="resolver.E011"))
    return problems


def protocol_members(protocol: type) -> list[str]:
    """The names a protocol declares: its methods, properties and annotated attributes."""
    names = [name for name in vars(protocol) if not name.startswith("_")]
    return names + [name for name in getattr(protocol, "__annotations__", {}) if name not in names]


def has_member(cls: type, name: str) -> bool:
    """Whether instances of `cls` have `name`: a class attribute, or a field declared without a default."""
    return hasattr(cls, name) or any(name in getattr(base, "__annotations__", {}) for base in cls.__mro__)


def _relevance_model() -> list[checks.CheckMessage]:
    """The relevance model's file reads: a broken one would fail every ranked request instead."""
    configured = resolver_settings.RELEVANCE_MODEL
    if configured is None:
        return []
    from resolver.domain.relevance import DEFAULT_MODEL, ModelFileError, RelevanceModel

    try:
        RelevanceModel.load(configured or DEFAULT_MODEL)
    except ModelFileError as err:
        return [checks.Error(f"RESOLVER['RELEVANCE_MODEL'] = {configured!r}: {err}",
                             hint="Name a model file bench/relevance.py wrote, \"\" for the shipped one, or None "
                                  "for the fusion rule.", id="resolver.E010")]
    return []


def _unknown_keys() -> list[checks.CheckMessage]:
    return [
        checks.Error(f"RESOLVER[{name!r}] is not a resolver setting.",
                     hint=f"Known keys: {', '.join(sorted(DEFAULTS))}.", id="resolver.E002")
        for name in sorted(set(user_settings()) - set(DEFAULTS), key=str)
    ]


_BACKEND_HINT = "Give the dotted path of a class with a from_settings(settings) classmethod."


def _backends() -> list[checks.CheckMessage]:
    """Each backend setting names a class resolver.conf.build_backend can build (the one way backends are made)."""
    problems: list[checks.CheckMessage] = []
    for name in BACKENDS:
        path = getattr(resolver_settings, name)
        if path is None:
            continue
        try:
            if not isinstance(path, str):
                raise ImportError("not a dotted path string")
            backend = import_setting(name)
        except ImportError as err:
            problems.append(checks.Error(f"RESOLVER[{name!r}] = {path!r} does not import: {err.__cause__ or err}",
                                         hint=_BACKEND_HINT, id="resolver.E003"))
            continue
        if not callable(getattr(backend, "from_settings", None)):
            problems.append(checks.Error(f"RESOLVER[{name!r}] = {path!r} has no from_settings(settings).",
                                         hint=_BACKEND_HINT, id="resolver.E003"))
        elif path in RENAMED_BACKENDS:
            problems.append(checks.Warning(f"RESOLVER[{name!r}] = {path!r} is an old name; it still works.",
                                           hint=f"Write {RENAMED_BACKENDS[path]!r}.", id="resolver.W002"))
    return problems


def _urls() -> list[checks.CheckMessage]:
    problems = []
    for name in _URL_SETTINGS:
        value = getattr(resolver_settings, name)
        if not value:  # empty means "not used" (or W001 for CALDAV_URL)
            continue
        parts = urlsplit(str(value))
        if parts.scheme not in ("http", "https") or not parts.netloc:
            problems.append(checks.Error(
                f"RESOLVER[{name!r}] = {value!r} is not an http(s) URL with a host.",
                hint="Write the scheme and host, e.g. http://127.0.0.1:8400.", id="resolver.E004"))
    return problems


def _time_zone() -> list[checks.CheckMessage]:
    value = resolver_settings.TIME_ZONE
    try:
        if not isinstance(value, str) or not value:
            raise ValueError(value)
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return [checks.Error(f"RESOLVER['TIME_ZONE'] = {value!r} is not an IANA time zone.",
                             hint="Use a name such as Europe/Berlin, or leave it unset for TIME_ZONE.",
                             id="resolver.E005")]
    return []


def _limits() -> list[checks.CheckMessage]:
    problems = []
    for name in _LIMITS:
        value = getattr(resolver_settings, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            problems.append(checks.Error(f"RESOLVER[{name!r}] = {value!r} is not a positive integer.",
                                         id="resolver.E006"))
        elif name == "MAX_CANDIDATES" and value > MAX_CANDIDATES:
            problems.append(checks.Error(
                f"RESOLVER['MAX_CANDIDATES'] = {value!r} is above {MAX_CANDIDATES}, the most the judge is shown.",
                id="resolver.E006"))
    return problems


def _caldav_url_set() -> list[checks.CheckMessage]:
    # Only the CalDAV backend reads it; another backend may need no URL at all.
    if backend_path("CALENDAR_BACKEND") == DEFAULTS["CALENDAR_BACKEND"] and not resolver_settings.CALDAV_URL:
        return [
            checks.Warning(
                "RESOLVER['CALDAV_URL'] is empty; every resolution will fail.",
                hint="Set the CALDAV_URL environment variable.",
                id="resolver.W001",
            )
        ]
    return []


@checks.register(TAG)
def check_calendar_backend(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """CALENDAR_BACKEND's class has what the app calls (resolver.calendars.backend.CalendarBackend)."""
    from resolver.calendars.backend import built_class, lacks
    from resolver.conf import backend_class

    try:
        backend = backend_class("CALENDAR_BACKEND")
    except Exception:  # noqa: BLE001 - resolver.E003 names a path that does not import
        return []
    missing = lacks(backend)
    if not missing:
        return []
    built = built_class(backend)
    return [checks.Error(
        f"RESOLVER['CALENDAR_BACKEND'] = {backend_path('CALENDAR_BACKEND')!r} builds {built.__qualname__}, "
        f"which has no {', '.join(name + '()' for name in missing)}.",
        hint="A calendar backend has collections() and fetch(kind=, collection_ids=, time_zone=): "
             "docs/calendars.md, 'Adding a calendar backend'.",
        id="resolver.E012")]
