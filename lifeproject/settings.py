"""Project settings. The environment is read here, and only here (django-environ)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
# Where the embedded default keeps its state; another directory for a second demo (or a test of bin/run).
VAR_DIR = Path(os.environ.get("LIFEPROJECT_VAR_DIR") or BASE_DIR / "var")

DEV_SECRET_KEY = "dev-insecure-lifeproject-key-change-me-in-production-0123456789"

# The embedded default (bin/run) writes the local Radicale's address and
# generated password here; real environment variables always win.
# LIFEPROJECT_DEV_ENV=off skips it. The test suite sets that for itself and the
# processes it starts: a `bin/run --per-user` (or a judge) left in var/dev.env
# must not change what the tests configure; tests of bin/run pass their own env.
if "pytest" in sys.modules:
    os.environ.setdefault("LIFEPROJECT_DEV_ENV", "off")
if os.environ.get("LIFEPROJECT_DEV_ENV") != "off" and (VAR_DIR / "dev.env").exists():
    environ.Env.read_env(VAR_DIR / "dev.env")

env = environ.Env(
    # Off unless asked for: bin/run turns it on for the demo server only.
    DEBUG=(bool, False),
    SECRET_KEY=(str, DEV_SECRET_KEY),
    ALLOWED_HOSTS=(list, ["127.0.0.1", "localhost", "testserver"]),
    CALDAV_URL=(str, "http://127.0.0.1:5232/"),
    CALDAV_USERNAME=(str, "demo"),
    CALDAV_PASSWORD=(str, ""),
    CALDAV_TIMEOUT=(float, 10.0),
    RESOLVER_EVENT_HORIZON_DAYS=(int, 90),
    RESOLVER_EVENT_TIME_RANGE_FILTER=(bool, True),
    RESOLVER_LANGUAGE=(str, "english"),
    RESOLVER_SEMANTIC=(bool, True),
    RESOLVER_GLOSSARY_DIR=(str, "/usr/share/dictd"),
    RESOLVER_RELEVANCE_MODEL=(str, ""),
    RESOLVER_OTHER_KIND=(bool, True),
    RESOLVER_CALDAV_SYNC=(str, "auto"),
    RESOLVER_CALDAV_SHARED_READS=(bool, True),
    RESOLVER_CALDAV_CTAG=(bool, True),
    RESOLVER_PARSE_CACHE_ITEMS=(int, 100_000),
    RESOLVER_MAX_RESPONSE_BYTES=(int, 8 * 1024 * 1024),
    RESOLVER_MAX_RESOURCE_BYTES=(int, 1024 * 1024),
    RESOLVER_MAX_RESOURCE_COMPONENTS=(int, 1000),
    RESOLVER_MAX_COMPONENT_DEPTH=(int, 8),
    RESOLVER_MAX_RESOURCE_OVERRIDES=(int, 1000),
    RESOLVER_MAX_RECURRENCE_DATES=(int, 2000),
    RESOLVER_RECURRENCE_BUDGET=(int, 10000),
    RESOLVER_SERVER_FILTER_RETRY_SECONDS=(int, 3600),
    RESOLVER_RESOLUTION_BUDGET_SECONDS=(float, 20.0),
    TYPESAFE_API_KEY=(str, ""),
    TYPESAFE_BASE_URL=(str, ""),
    TYPESAFE_DEFAULT_MODEL=(str, "jev-latest"),
    RESOLVER_JUDGMENT_BUDGET_SECONDS=(float, 8.0),
    # jev | openai | off; empty: jev when TYPESAFE_* is configured, else off.
    RESOLVER_JUDGE=(str, ""),
    OPENAI_BASE_URL=(str, ""),
    OPENAI_API_KEY=(str, ""),
    OPENAI_MODEL=(str, ""),
    RESOLVER_JUDGE_CORRECTIONS=(int, 1),
    RESOLVER_THRESHOLD_MARGIN=(float, 0.1),
    RESOLVER_PROVENANCE_TTL_SECONDS=(int, 900),
    # Where the clarification page is served; the command builds its links from it.
    RESOLVER_SITE_URL=(str, "http://127.0.0.1:8000"),
    RESOLVER_CLARIFICATION_MAX_AGE_SECONDS=(int, 900),
    RESOLVER_THROTTLE_RATE=(str, "120/min"),
    # IANA zone for requests that name none; empty means TIME_ZONE (UTC).
    RESOLVER_TIME_ZONE=(str, ""),
    # Whose calendar a request reads: resolver.accounts.SettingsAccount (the one
    # account above) or resolver.accounts.PerUserAccounts (each person's own).
    RESOLVER_ACCOUNT_BACKEND=(str, "resolver.accounts.SettingsAccount"),
    RESOLVER_ACCOUNT_ALLOW_PRIVATE_ADDRESSES=(bool, False),
    RESOLVER_ACCOUNT_MAX_PER_USER=(int, 10),
    RESOLVER_MAX_IN_FLIGHT_PER_PERSON=(int, 4),
    RESOLVER_ACCOUNT_CHECK_RATE=(str, "10/hour"),
    # HTTPS hardening: off by default for local development over plain HTTP;
    # the production environment (docs/performance.md) turns every one on.
    SECURE_SSL_REDIRECT=(bool, False),
    SESSION_COOKIE_SECURE=(bool, False),
    CSRF_COOKIE_SECURE=(bool, False),
    SECURE_HSTS_SECONDS=(int, 0),
    SECURE_HSTS_INCLUDE_SUBDOMAINS=(bool, False),
    SECURE_HSTS_PRELOAD=(bool, False),
    # "HTTP_X_FORWARDED_PROTO,https" behind a TLS-terminating proxy that sets it.
    SECURE_PROXY_SSL_HEADER=(list, []),
    CSRF_TRUSTED_ORIGINS=(list, []),
    LOG_LEVEL=(str, "INFO"),
    # MCP over HTTP (README "MCP over HTTP"): OAuth access tokens are short-lived, refresh tokens rotate.
    MCP_ACCESS_TOKEN_SECONDS=(int, 300),
    MCP_REFRESH_TOKEN_SECONDS=(int, 30 * 24 * 3600),
    # Client ID Metadata Documents: clients identified by an https URL (fetched, SSRF-hardened).
    MCP_CLIENT_ID_METADATA_DOCUMENTS=(bool, True),
    # The authorization server against abuse (docs/oauth.md).
    RESOLVER_OAUTH_THROTTLE_RATE=(str, "30/min"),
    # The reverse proxies whose X-Forwarded-For is believed (addresses or networks,
    # comma-separated); empty: none (resolver/client_address.py). gunicorn.conf.py reads it too.
    RESOLVER_TRUSTED_PROXIES=(list, []),
    RESOLVER_MAX_JSON_DEPTH=(int, 32),
    RESOLVER_OAUTH_CIMD_MAX_CLIENTS=(int, 500),
    RESOLVER_OAUTH_CIMD_UNUSED_SECONDS=(int, 7 * 24 * 3600),
    RESOLVER_OAUTH_CIMD_MAX_CLIENTS_PER_PERSON=(int, 20),
    RESOLVER_OAUTH_CIMD_FETCH_RATE=(str, "20/hour"),
    RESOLVER_OAUTH_CIMD_FETCHES_IN_FLIGHT=(int, 10),
)

DEBUG = env("DEBUG")
SECRET_KEY = env("SECRET_KEY")
ALLOWED_HOSTS = env("ALLOWED_HOSTS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    # The MCP door's authorization server (OAUTH2_PROVIDER below; README "MCP over HTTP").
    "oauth2_provider",
    "resolver",
]

# `manage.py resolve` is a fresh process on every call (docs/performance.md, "The shell
# door"): it loads only the apps a resolution uses. These serve pages, the admin and the
# OAuth server; their models and admin modules (jwcrypto, cryptography's x509, oauthlib,
# every admin.py) were about two fifths of its django.setup(). lifeproject/urls.py leaves
# their routes out when they are not installed, so `--user`'s page links still reverse.
WEB_ONLY_APPS = ("django.contrib.admin", "django.contrib.messages", "django.contrib.staticfiles",
                 "drf_spectacular", "oauth2_provider")
COMMAND_PROCESS = Path(sys.argv[0]).name == "manage.py" and sys.argv[1:2] == ["resolve"]
if COMMAND_PROCESS:
    INSTALLED_APPS = [app for app in INSTALLED_APPS if app not in WEB_ONLY_APPS]

MIDDLEWARE = [
    # First, so its duration and status cover every other middleware too.
    "lifeproject.request_log.RequestLogMiddleware",
    # Every error under /v1/ is an envelope (unknown path, disallowed host, ...), DEBUG or not.
    "lifeproject.errors.ApiErrorEnvelopeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Static files straight from the app servers: no separate file server to run.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "lifeproject.urls"
WSGI_APPLICATION = "lifeproject.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}")}
# django-environ maps redis:// and rediscache:// to django-redis whenever that
# package is importable; we use Django's own RedisCache, so name it explicitly.
_CACHE_URL = env.str("CACHE_URL", default=f"filecache://{VAR_DIR / 'cache'}")
_REDIS = _CACHE_URL.split("://", 1)[0] in ("redis", "rediss", "rediscache")
CACHES = {
    "default": environ.Env.cache_url_config(
        _CACHE_URL, backend="django.core.cache.backends.redis.RedisCache" if _REDIS else None
    )
}
# For that backend django-environ lower-cases every query option, Django's own
# (`?key_prefix=...&timeout=...`) included, so Django would ignore them.
for _name in ("key_prefix", "timeout", "version", "key_function"):
    if _name in CACHES["default"]:
        CACHES["default"][_name.upper()] = CACHES["default"].pop(_name)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = env.path("STATIC_ROOT", default=VAR_DIR / "static")
# Compressed copies at collectstatic time; no manifest, so templates render
# the same whether or not collectstatic has run (tests, development).
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

SECURE_SSL_REDIRECT = env("SECURE_SSL_REDIRECT")
# Load balancers probe over plain HTTP inside the network.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SESSION_COOKIE_SECURE = env("SESSION_COOKIE_SECURE")
CSRF_COOKIE_SECURE = env("CSRF_COOKIE_SECURE")
SECURE_HSTS_SECONDS = env("SECURE_HSTS_SECONDS")
SECURE_HSTS_INCLUDE_SUBDOMAINS = env("SECURE_HSTS_INCLUDE_SUBDOMAINS")
SECURE_HSTS_PRELOAD = env("SECURE_HSTS_PRELOAD")
SECURE_PROXY_SSL_HEADER = tuple(env("SECURE_PROXY_SSL_HEADER")) or None
CSRF_TRUSTED_ORIGINS = env("CSRF_TRUSTED_ORIGINS")
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/resolve/"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # Bounded (RESOLVER["MAX_BODY_BYTES"]) and strict; see resolver/api/parsers.py.
    "DEFAULT_PARSER_CLASSES": ["resolver.api.parsers.BoundedJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "EXCEPTION_HANDLER": "resolver.api.exceptions.envelope_exception_handler",
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # Only views with a `throttle_scope` are throttled (today: /v1/resolve, per user).
    # The counts live in the default cache, so share that cache between workers.
    "DEFAULT_THROTTLE_CLASSES": ["rest_framework.throttling.ScopedRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"resolve": env("RESOLVER_THROTTLE_RATE")},
    # DRF's anonymous throttles key on X-Forwarded-For from anyone unless told how many
    # proxies there are; 0: REMOTE_ADDR. The app's own throttles follow RESOLVER["TRUSTED_PROXIES"].
    "NUM_PROXIES": 0,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Reference resolver API",  # as resolver/openapi.py SPECTACULAR_SETTINGS
    "DESCRIPTION": (
        "Resolves an informal reference to one live CalDAV task or event, or asks which one. "
        "Every response is an envelope: `status` is `ok`, `needs_clarification` or `error`, "
        "and an error carries a stable `error.code`."
    ),
    "VERSION": "1",
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": True,
    # Like every endpoint but /healthz: the schema is for authenticated clients.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # Request and response shapes differ (the request rejects unknown fields).
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {"BadRequestCodeEnum": "resolver.openapi.BAD_REQUEST_CODES"},
}

JUDGE_BACKENDS = {
    "jev": "resolver.judges.jev.JevJudge",
    "openai": "resolver.judges.openai.OpenAIJudge",
    "off": "resolver.judges.disabled.DisabledJudge",
}
_judge = env("RESOLVER_JUDGE").strip().lower() or (
    "jev" if env("TYPESAFE_API_KEY") or env("TYPESAFE_BASE_URL") else "off"
)
if _judge not in JUDGE_BACKENDS:
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured(f"RESOLVER_JUDGE must be one of {', '.join(JUDGE_BACKENDS)}, not {_judge!r}.")

RESOLVER = {
    "CALDAV_URL": env("CALDAV_URL"),
    "CALDAV_USERNAME": env("CALDAV_USERNAME"),
    "CALDAV_PASSWORD": env("CALDAV_PASSWORD"),
    "CALDAV_TIMEOUT": env("CALDAV_TIMEOUT"),
    "EVENT_HORIZON_DAYS": env("RESOLVER_EVENT_HORIZON_DAYS"),
    "EVENT_TIME_RANGE_FILTER": env("RESOLVER_EVENT_TIME_RANGE_FILTER"),
    "LANGUAGE": env("RESOLVER_LANGUAGE"),
    "SEMANTIC": env("RESOLVER_SEMANTIC"),
    "GLOSSARY_DIR": env("RESOLVER_GLOSSARY_DIR"),
    # "" the shipped relevance model, a path another one, "off" the fusion rule instead (docs/retrieval.md).
    "RELEVANCE_MODEL": None if env("RESOLVER_RELEVANCE_MODEL") == "off" else env("RESOLVER_RELEVANCE_MODEL"),
    "OTHER_KIND": env("RESOLVER_OTHER_KIND"),
    "CALDAV_SYNC": env("RESOLVER_CALDAV_SYNC"),
    "CALDAV_SHARED_READS": env("RESOLVER_CALDAV_SHARED_READS"),
    "CALDAV_CTAG": env("RESOLVER_CALDAV_CTAG"),
    # A process that resolves once (manage.py resolve) has no later request for a memo or a
    # sync token to serve: 0 makes its read one calendar-query per collection, for the kind only,
    # instead of an initial sync-collection that brings both kinds (docs/performance.md).
    "PARSE_CACHE_ITEMS": 0 if COMMAND_PROCESS else env("RESOLVER_PARSE_CACHE_ITEMS"),
    "MAX_RESPONSE_BYTES": env("RESOLVER_MAX_RESPONSE_BYTES"),
    "MAX_RESOURCE_BYTES": env("RESOLVER_MAX_RESOURCE_BYTES"),
    "MAX_RESOURCE_COMPONENTS": env("RESOLVER_MAX_RESOURCE_COMPONENTS"),
    "MAX_COMPONENT_DEPTH": env("RESOLVER_MAX_COMPONENT_DEPTH"),
    "MAX_RESOURCE_OVERRIDES": env("RESOLVER_MAX_RESOURCE_OVERRIDES"),
    "MAX_RECURRENCE_DATES": env("RESOLVER_MAX_RECURRENCE_DATES"),
    "RECURRENCE_BUDGET": env("RESOLVER_RECURRENCE_BUDGET"),
    "SERVER_FILTER_RETRY_SECONDS": env("RESOLVER_SERVER_FILTER_RETRY_SECONDS"),
    "RESOLUTION_BUDGET_SECONDS": env("RESOLVER_RESOLUTION_BUDGET_SECONDS"),
    "TYPESAFE_API_KEY": env("TYPESAFE_API_KEY"),
    "TYPESAFE_BASE_URL": env("TYPESAFE_BASE_URL"),
    "TYPESAFE_DEFAULT_MODEL": env("TYPESAFE_DEFAULT_MODEL"),
    "JUDGMENT_BUDGET_SECONDS": env("RESOLVER_JUDGMENT_BUDGET_SECONDS"),
    "JUDGE_BACKEND": JUDGE_BACKENDS[_judge],
    "OPENAI_BASE_URL": env("OPENAI_BASE_URL"),
    "OPENAI_API_KEY": env("OPENAI_API_KEY"),
    "OPENAI_MODEL": env("OPENAI_MODEL"),
    "JUDGE_CORRECTIONS": env("RESOLVER_JUDGE_CORRECTIONS"),
    "THRESHOLD_MARGIN": env("RESOLVER_THRESHOLD_MARGIN"),
    "PROVENANCE_TTL_SECONDS": env("RESOLVER_PROVENANCE_TTL_SECONDS"),
    "SITE_URL": env("RESOLVER_SITE_URL"),
    "CLARIFICATION_MAX_AGE_SECONDS": env("RESOLVER_CLARIFICATION_MAX_AGE_SECONDS"),
    "TIME_ZONE": env("RESOLVER_TIME_ZONE") or None,
    "ACCOUNT_BACKEND": env("RESOLVER_ACCOUNT_BACKEND"),
    "ACCOUNT_ALLOW_PRIVATE_ADDRESSES": env("RESOLVER_ACCOUNT_ALLOW_PRIVATE_ADDRESSES"),
    "ACCOUNT_MAX_PER_USER": env("RESOLVER_ACCOUNT_MAX_PER_USER"),
    "MAX_IN_FLIGHT_PER_PERSON": env("RESOLVER_MAX_IN_FLIGHT_PER_PERSON"),
    "ACCOUNT_CHECK_RATE": env("RESOLVER_ACCOUNT_CHECK_RATE"),
    # The MCP endpoint's requests join the site's JSON lines (lifeproject/request_log.py).
    "REQUEST_LOG": "lifeproject.request_log",
    "OAUTH_THROTTLE_RATE": env("RESOLVER_OAUTH_THROTTLE_RATE"),
    "TRUSTED_PROXIES": env("RESOLVER_TRUSTED_PROXIES"),
    "MAX_JSON_DEPTH": env("RESOLVER_MAX_JSON_DEPTH"),
    "OAUTH_CIMD_MAX_CLIENTS": env("RESOLVER_OAUTH_CIMD_MAX_CLIENTS"),
    "OAUTH_CIMD_UNUSED_SECONDS": env("RESOLVER_OAUTH_CIMD_UNUSED_SECONDS"),
    "OAUTH_CIMD_MAX_CLIENTS_PER_PERSON": env("RESOLVER_OAUTH_CIMD_MAX_CLIENTS_PER_PERSON"),
    "OAUTH_CIMD_FETCH_RATE": env("RESOLVER_OAUTH_CIMD_FETCH_RATE"),
    "OAUTH_CIMD_FETCHES_IN_FLIGHT": env("RESOLVER_OAUTH_CIMD_FETCHES_IN_FLIGHT"),
}

# The authorization server of the MCP door (django-oauth-toolkit), as the app documents it
# (resolver/oauth/provider.py; README "MCP over HTTP"). resolver/oauth/ holds the resource side.
from resolver.oauth.provider import oauth2_provider_settings  # noqa: E402

OAUTH2_PROVIDER = oauth2_provider_settings(
    env("RESOLVER_SITE_URL"),
    access_token_seconds=env("MCP_ACCESS_TOKEN_SECONDS"),
    refresh_token_seconds=env("MCP_REFRESH_TOKEN_SECONDS"),
    client_id_metadata_documents=env("MCP_CLIENT_ID_METADATA_DOCUMENTS"),
)
# W008 warns that `http` redirect URIs are allowed. Desktop and command-line MCP clients
# receive the code on a loopback `http://127.0.0.1:PORT/...` callback (RFC 8252 section 7.3,
# which the MCP authorization spec follows); refusing `http` would lock them out. Clients
# are pre-registered by an admin or identified by their own https metadata document.
SILENCED_SYSTEM_CHECKS = ["oauth2_provider.W008"]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "lifeproject.request_log.JsonFormatter"}},
    # A resolution logged while a request is handled joins that request's line.
    "filters": {
        "capture_outcome": {"()": "lifeproject.request_log.CaptureOutcome"},
        # Secrets out of every line (resolver/redaction.py). The app also redacts every record
        # when it is made; on the handlers it covers `extra` fields, added after that.
        "redact_secrets": {"()": "resolver.redaction.RedactSecrets"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "filters": ["redact_secrets"]},
        # stderr, like every other log: a command's stdout is its answer (`manage.py resolve`).
        "requests": {"class": "logging.StreamHandler", "formatter": "json", "filters": ["redact_secrets"]},
        "resolutions": {"class": "logging.StreamHandler", "formatter": "json",
                        "filters": ["redact_secrets", "capture_outcome"]},
    },
    "loggers": {
        "resolver": {"handlers": ["console"], "level": env("LOG_LEVEL")},
        # One JSON line per request (lifeproject/request_log.py).
        "lifeproject.requests": {"handlers": ["requests"], "level": "INFO", "propagate": False},
        "resolver.requests": {"handlers": ["resolutions"], "level": "INFO", "propagate": False},
    },
}
